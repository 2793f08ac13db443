"""DeepSeek-R1 prefill with two micro-batches: their MoE all-to-alls on "stream1", the rest on the main stream.

Shaped after ``DeepseekV3Model.forward_microbatch_v1`` in cann-recipes-infer
``models/deepseek_r1/models/modeling_deepseek.py`` (``micro_batch_mode`` =
``PREFILL_MICRO_BATCH_DP_EP``): the prefill batch is split in two micro-batches at a
request boundary (``gen_microbatch_input``), each with its own inputs
(``prepare_inputs_for_layer``: embedding, ``cos_sin``). The first
``first_k_dense_replace`` layers run both on the main stream. In every MoE layer,
upstream runs each micro-batch's attention, post-attention norm and
``forward_gate_init_routing`` on the main stream (recording ``event_routing_dispatch``
after each), then both shared experts; ``forward_dispatch_double_routing`` runs on
``self.stream1`` after waiting for that event; the main stream waits for
``event_dispatch_expert`` before ``forward_expert``, whose ``event_expert_combine``
the combine on ``stream1`` waits for; the main stream waits for
``event_combine_finalize_routing`` before ``forward_finalize_routing``. Micro-batch 0
is finalized in its layer; micro-batch 1 in the next layer, after micro-batch 0's
attention (its combine overlaps that attention), and after the last layer, with the
loop's last ``decode_layer``. The model then joins ``stream1`` both ways before the
final norm. So micro-batch 0's dispatch overlaps micro-batch 1's attention, routing
and the shared experts, micro-batch 1's dispatch and micro-batch 0's combine overlap
the experts.

Decorated (``decoder.py``), the dispatch and the combine are methods on "stream1"
and every event is the automatic fork or join of a value; the code here has no
stream left. A call forks where it is written, so each micro-batch's dispatch is
called where upstream records its ``event_routing_dispatch`` (right after its
routing), not after the shared experts, where upstream's ``with`` block issues it:
the same order on the device. ``micro_batch`` stands for ``micro_batch_mode != DISABLE``; off, or in
decode, the batch runs whole through ``DeepseekV3DecoderLayer.forward`` on one stream
(each request attends only to itself: the same math per request). ``multi_stream``
off keeps the micro-batches but runs them on one stream (``decoder.py``).

Idioms: loop_call (the stream calls in the layer loop; micro-batch 1's combine read in
the next iteration and after the loop), non_tensor_args (the micro-batch dicts, the
``cos_sin`` tuples, ``seq_lens``, ``is_prefill``, the lists of splits the dispatch
returns and the combine takes).
"""

from __future__ import annotations

import torch
from torch import nn

from .decoder import DeepseekV3DecoderLayer
from .layers import RMSNorm, rotary


class DeepseekV3Model(nn.Module):
    def __init__(self, vocab: int, hidden: int, inter: int, moe_inter: int, experts: int, top_k: int, layers: int,
                 first_k_dense_replace: int, multi_stream: bool = True, micro_batch: bool = True) -> None:
        super().__init__()
        self.first_k_dense_replace, self.micro_batch = first_k_dense_replace, micro_batch
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(
            DeepseekV3DecoderLayer(i, hidden, inter, moe_inter, experts, top_k, first_k_dense_replace,
                                   multi_stream)
            for i in range(layers)
        )
        self.norm = RMSNorm(hidden)

    def prepare_inputs_for_layer(self, input_ids: torch.Tensor, position_ids: torch.Tensor):
        hidden_states = self.embed_tokens(input_ids)
        return hidden_states, None, rotary(position_ids, hidden_states.shape[-1])

    def gen_microbatch_input(self, input_ids: torch.Tensor, position_ids: torch.Tensor, slot_mapping: torch.Tensor,
                             seq_lens: tuple[int, ...]) -> list[dict[str, object]]:
        """Two micro-batches of whole requests: the first half of the requests, then the rest."""
        split = len(seq_lens) // 2
        cut = sum(seq_lens[:split])
        return [
            {"input_ids": input_ids[:cut], "position_ids": position_ids[:cut], "slot_mapping": slot_mapping[:cut],
             "seq_lens": seq_lens[:split]},
            {"input_ids": input_ids[cut:], "position_ids": position_ids[cut:], "slot_mapping": slot_mapping[cut:],
             "seq_lens": seq_lens[split:]},
        ]

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, kv_cache: torch.Tensor,
                slot_mapping: torch.Tensor, seq_lens: tuple[int, ...], is_prefill: bool = True) -> torch.Tensor:
        if is_prefill and self.micro_batch:
            micro_batches = self.gen_microbatch_input(input_ids, position_ids, slot_mapping, seq_lens)
            return self.forward_microbatch_v1(micro_batches, kv_cache, is_prefill)
        hidden_states, residual, cos_sin = self.prepare_inputs_for_layer(input_ids, position_ids)
        for decoder_layer in self.layers:
            residual, hidden_states = decoder_layer(hidden_states, cos_sin, kv_cache, slot_mapping, seq_lens,
                                                    residual, is_prefill)
        hidden_states, _ = self.norm(hidden_states, residual)
        return hidden_states

    def forward_microbatch_v1(self, micro_batches: list[dict[str, object]], kv_cache: torch.Tensor,
                              is_prefill: bool = True) -> torch.Tensor:
        mb0, mb1 = micro_batches
        slot_mapping_mb0, seq_lens_mb0 = mb0["slot_mapping"], mb0["seq_lens"]
        hidden_states_mb0, residual_mb0, cos_sin_mb0 = self.prepare_inputs_for_layer(mb0["input_ids"],
                                                                                     mb0["position_ids"])
        slot_mapping_mb1, seq_lens_mb1 = mb1["slot_mapping"], mb1["seq_lens"]
        hidden_states_mb1, residual_mb1, cos_sin_mb1 = self.prepare_inputs_for_layer(mb1["input_ids"],
                                                                                     mb1["position_ids"])
        for layer_id, decode_layer in enumerate(self.layers):
            # disable micro_batch in dense layers
            if layer_id < self.first_k_dense_replace:
                hidden_states_mb0, residual_mb0 = decode_layer.forward_attn(
                    hidden_states_mb0, cos_sin_mb0, kv_cache, slot_mapping_mb0, seq_lens_mb0, residual_mb0)
                hidden_states_mb1, residual_mb1 = decode_layer.forward_attn(
                    hidden_states_mb1, cos_sin_mb1, kv_cache, slot_mapping_mb1, seq_lens_mb1, residual_mb1)
                hidden_states_mb0, residual_mb0 = decode_layer.forward_mlp(hidden_states_mb0, residual_mb0,
                                                                           is_prefill)
                hidden_states_mb1, residual_mb1 = decode_layer.forward_mlp(hidden_states_mb1, residual_mb1,
                                                                           is_prefill)
            else:
                hidden_states_mb0, residual_mb0 = decode_layer.forward_attn(
                    hidden_states_mb0, cos_sin_mb0, kv_cache, slot_mapping_mb0, seq_lens_mb0, residual_mb0)
                # the previous layer's combine of micro-batch 1 overlapped micro-batch 0's attention
                if layer_id > self.first_k_dense_replace:
                    hidden_states_mb1 = decode_layer.forward_finalize_routing(
                        hidden_states_mb1, gathered_tokens_mb1, hidden_states_share_mb1, topk_weight_mb1,
                        expanded_row_idx_mb1)
                hidden_states_mb0, residual_mb0 = decode_layer.forward_post_attention_layernorm(hidden_states_mb0,
                                                                                                 residual_mb0)
                expanded_x_mb0, expanded_row_idx_mb0, tokens_per_expert_mb0, pertoken_scale_mb0, topk_weight_mb0 = \
                    decode_layer.forward_gate_init_routing(hidden_states_mb0)
                # upstream records event_routing_dispatch_mb0 here: the dispatch's fork
                tokens_per_expert_group_mb0, gathered_tokens_mb0, gathered_pertoken_scale_mb0, input_splits_mb0, \
                    output_splits_mb0 = decode_layer.forward_dispatch_double_routing(
                        tokens_per_expert_mb0, expanded_x_mb0, pertoken_scale_mb0)

                hidden_states_mb1, residual_mb1 = decode_layer.forward_attn(
                    hidden_states_mb1, cos_sin_mb1, kv_cache, slot_mapping_mb1, seq_lens_mb1, residual_mb1)
                hidden_states_mb1, residual_mb1 = decode_layer.forward_post_attention_layernorm(hidden_states_mb1,
                                                                                                 residual_mb1)
                expanded_x_mb1, expanded_row_idx_mb1, tokens_per_expert_mb1, pertoken_scale_mb1, topk_weight_mb1 = \
                    decode_layer.forward_gate_init_routing(hidden_states_mb1)
                # upstream records event_routing_dispatch_mb1 here
                tokens_per_expert_group_mb1, gathered_tokens_mb1, gathered_pertoken_scale_mb1, input_splits_mb1, \
                    output_splits_mb1 = decode_layer.forward_dispatch_double_routing(
                        tokens_per_expert_mb1, expanded_x_mb1, pertoken_scale_mb1)

                hidden_states_share_mb0 = decode_layer.forward_shared_expert(hidden_states_mb0, is_prefill)
                hidden_states_share_mb1 = decode_layer.forward_shared_expert(hidden_states_mb1, is_prefill)

                new_x_mb0 = decode_layer.forward_expert(gathered_tokens_mb0, tokens_per_expert_group_mb0,
                                                        gathered_pertoken_scale_mb0)
                gathered_tokens_mb0 = decode_layer.forward_combine_double_routing(
                    new_x_mb0, expanded_x_mb0, input_splits_mb0, output_splits_mb0)
                new_x_mb1 = decode_layer.forward_expert(gathered_tokens_mb1, tokens_per_expert_group_mb1,
                                                        gathered_pertoken_scale_mb1)
                gathered_tokens_mb1 = decode_layer.forward_combine_double_routing(
                    new_x_mb1, expanded_x_mb1, input_splits_mb1, output_splits_mb1)
                hidden_states_mb0 = decode_layer.forward_finalize_routing(
                    hidden_states_mb0, gathered_tokens_mb0, hidden_states_share_mb0, topk_weight_mb0,
                    expanded_row_idx_mb0)

        hidden_states_mb1 = decode_layer.forward_finalize_routing(
            hidden_states_mb1, gathered_tokens_mb1, hidden_states_share_mb1, topk_weight_mb1, expanded_row_idx_mb1)
        hidden_states_mb0, _ = self.norm(hidden_states_mb0, residual_mb0)
        hidden_states_mb1, _ = self.norm(hidden_states_mb1, residual_mb1)
        return torch.cat([hidden_states_mb0, hidden_states_mb1], dim=0)
