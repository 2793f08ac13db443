"""Qwen3-MoE with dual-batch overlap: two micro-batches, each one's MoE all-to-all on "communicate_stream".

Shaped after vllm-ascend ``vllm_ascend/models/qwen3_dbo.py``
(``Qwen3MoeDecoderLayerDBO._forward_ms_layer_alltoallv_finegrained`` and
``CustomQwen3DBOMoEModel._forward_ms_layers``) with the multi-stream helpers of
``vllm_ascend/multistream/layers.py`` (``MultiStreamPreTransformerLayer`` splitting the batch and
its metadata in two at ``find_best_split_point``, ``MultiStreamPostTransformerLayer``
merging them, ``MultiStreamStepMetadata`` with ``comm_stream``, ``before_comm_event``
and ``after_comm_event``, the ``MSEventKey`` events of each layer and micro-batch).

Per layer, a first loop runs each micro-batch's norm, attention (writing the KV cache
in place), routing and ``preprocess_and_permtute1`` on the main stream, then its
token dispatch (``dispatch_alltoall`` and ``permute2``) on the communication stream:
upstream records ``MOE_BEFORE_COMM`` and the comm stream waits for it (the fork), and
records ``MOE_AFTER_COMM`` after it. So micro-batch 0's dispatch overlaps micro-batch
1's attention. A second loop waits for ``MOE_AFTER_COMM`` of each micro-batch (the join
at the first use of the dispatched tokens), runs its grouped matmuls on the main stream,
then its combine on the communication stream (``FFN_COM_FINISH`` the fork,
``FFN_AR_FINISH`` recorded after), so micro-batch 0's combine overlaps micro-batch 1's
experts; the next layer waits for ``FFN_AR_FINISH`` of each micro-batch before its
norm, and the model after the last layer, before the merge. Decorated, the two
``with torch.npu.stream(comm_stream)`` blocks are the methods
``_forward_dispatch_comm`` (a name for upstream's inline block) and
``_forward_combine_comm`` (upstream's own method) on ``COMM_STREAM``, and the events
are the automatic fork and join. ``enable_dbo`` stands for ``VLLM_ASCEND_ENABLE_DBO``;
off, the same micro-batches run on one stream (upstream then runs the batch whole:
the same math per request). A decode batch is not split (``can_run_ms``). Upstream's
``discard_tensor`` (freeing a micro-batch's storage early by resizing it to zero) is
left out.

Idioms: loop_call (the stream calls in the micro-batch loops, their results stored
in per-micro-batch lists and read in the next loop or the next layer),
container_returns (``permute2``'s tuple unpacked into two list items, the layer's
lists returned), non_tensor_args (the attention metadata, a list of them, the
dispatcher object holding its state, ints), config_when (``when="self.enable_dbo"``),
module_constants (the stream tag), side_to_side (the dispatcher's state written on
the communication stream by the dispatch and read there by the combine).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import on_stream

from .layers import AttnMetadata, Attention, GroupedExperts, RMSNorm, TokenDispatcher, find_best_split_point
from .layers import gating, split_micro_batch

COMM_STREAM = "communicate_stream"
MIN_TOTAL_TOKENS_TO_SPLIT = 4


class Qwen3MoeDecoderLayerDBO(nn.Module):
    def __init__(self, layer_id: int, hidden: int, moe_inter: int, experts: int, top_k: int,
                 enable_dbo: bool) -> None:
        super().__init__()
        self.layer_id, self.top_k, self.enable_dbo = layer_id, top_k, enable_dbo
        self.self_attn = Attention(hidden)
        self.input_layernorm = RMSNorm(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = GroupedExperts(hidden, moe_inter, experts, top_k)

    def forward(self, hidden_states: torch.Tensor, residual: torch.Tensor | None, kv_cache: torch.Tensor,
                attn_metadata: AttnMetadata) -> tuple[torch.Tensor, torch.Tensor]:
        """The whole batch on one stream (no split)."""
        hidden_states, residual = self.input_layernorm(hidden_states, residual)
        hidden_states = self.self_attn(hidden_states, kv_cache[self.layer_id], attn_metadata)
        hidden_states, residual = self.post_attention_layernorm(hidden_states, residual)
        topk_weights, topk_ids = gating(self.gate, hidden_states, self.top_k)
        dispatcher = self.experts.token_dispatchers[0]
        dispatcher.preprocess_and_permtute1(hidden_states, topk_weights, topk_ids)
        dispatcher.dispatch_alltoall()
        tokens, tokens_per_expert = dispatcher.permute2()
        combined = dispatcher.combine_alltoall(self.experts.grouped_mlp(tokens, tokens_per_expert))
        return dispatcher.unpermute(combined), residual

    def _forward_ms_op_input_layernorm(self, hidden_states: torch.Tensor,
                                       residual: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        return self.input_layernorm(hidden_states, residual)

    def _forward_ms_op_attn(self, hidden_states: torch.Tensor, kv_cache: torch.Tensor,
                            attn_metadata: AttnMetadata) -> torch.Tensor:
        return self.self_attn(hidden_states, kv_cache[self.layer_id], attn_metadata)

    def _forward_ms_op_post_attn_layernorm(self, hidden_states: torch.Tensor,
                                           residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.post_attention_layernorm(hidden_states, residual)

    def _forward_op_gating(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        topk_weights, topk_ids = gating(self.gate, hidden_states, self.top_k)
        return topk_weights, topk_ids, hidden_states

    @on_stream(COMM_STREAM, when="self.enable_dbo")
    def _forward_dispatch_comm(self, token_dispatcher: TokenDispatcher) -> tuple[torch.Tensor, torch.Tensor]:
        token_dispatcher.dispatch_alltoall()
        return token_dispatcher.permute2()

    @on_stream(COMM_STREAM, when="self.enable_dbo")
    def _forward_combine_comm(self, router_expert_output: torch.Tensor, i: int, num_tokens: int) -> torch.Tensor:
        token_dispatcher = self.experts.token_dispatchers[i]
        combined = token_dispatcher.combine_alltoall(router_expert_output)
        return token_dispatcher.unpermute(combined).view(num_tokens, -1)

    def _forward_ms_layer_alltoallv_finegrained(
        self, hidden_states: list[torch.Tensor], residual: list[torch.Tensor | None],
        attn_metadata: list[AttnMetadata], kv_cache: torch.Tensor,
    ) -> tuple[list[torch.Tensor], list[torch.Tensor | None]]:
        num_micro_batchs = len(attn_metadata)
        num_tokens: list[int] = [0] * num_micro_batchs
        topk_weights: list[torch.Tensor | None] = [None] * num_micro_batchs
        topk_ids: list[torch.Tensor | None] = [None] * num_micro_batchs
        tokens_per_expert: list[torch.Tensor | None] = [None] * num_micro_batchs
        dispatched_input: list[torch.Tensor | None] = [None] * num_micro_batchs
        router_expert_output: list[torch.Tensor | None] = [None] * num_micro_batchs
        token_dispatchers = self.experts.token_dispatchers
        # attention, routing and the token dispatch: micro-batch 1's attention overlaps micro-batch 0's dispatch
        for i in range(num_micro_batchs):
            hidden_states[i], residual[i] = self._forward_ms_op_input_layernorm(hidden_states[i], residual[i])
            hidden_states[i] = self._forward_ms_op_attn(hidden_states[i], kv_cache, attn_metadata[i])
            hidden_states[i], residual[i] = self._forward_ms_op_post_attn_layernorm(hidden_states[i], residual[i])
            num_tokens[i] = hidden_states[i].shape[0]
            topk_weights[i], topk_ids[i], dispatched_input[i] = self._forward_op_gating(hidden_states[i])
            token_dispatchers[i].preprocess_and_permtute1(dispatched_input[i], topk_weights[i], topk_ids[i])
            dispatched_input[i], tokens_per_expert[i] = self._forward_dispatch_comm(token_dispatchers[i])
        # the routed experts and the combine: micro-batch 1's experts overlap micro-batch 0's combine
        for i in range(num_micro_batchs):
            router_expert_output[i] = self.experts.grouped_mlp(dispatched_input[i], tokens_per_expert[i])
            hidden_states[i] = self._forward_combine_comm(router_expert_output[i], i, num_tokens[i])
        return hidden_states, residual


class CustomQwen3DBOMoEModel(nn.Module):
    def __init__(self, hidden: int, moe_inter: int, experts: int, top_k: int, layers: int,
                 multistream: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            Qwen3MoeDecoderLayerDBO(i, hidden, moe_inter, experts, top_k, multistream) for i in range(layers)
        )
        self.norm = RMSNorm(hidden)

    def can_run_ms(self, attn_metadata: AttnMetadata) -> int:
        """Where to split the batch (requests in the first micro-batch), -1: not at all (decode, too few tokens)."""
        if not attn_metadata.is_prefill:
            return -1
        return find_best_split_point(attn_metadata.query_lens, MIN_TOTAL_TOKENS_TO_SPLIT)

    def _forward_ms_layers(self, hidden_states: torch.Tensor, kv_cache: torch.Tensor, attn_metadata: AttnMetadata,
                           split_bs_point: int) -> tuple[torch.Tensor, torch.Tensor]:
        ms_attn_metadata, [hidden_list, residual_list] = split_micro_batch(split_bs_point, [hidden_states, None],
                                                                          attn_metadata)
        for layer in self.layers:
            hidden_list, residual_list = layer._forward_ms_layer_alltoallv_finegrained(
                hidden_list, residual_list, ms_attn_metadata, kv_cache)
        return torch.cat(hidden_list, dim=0), torch.cat(residual_list, dim=0)

    def forward(self, hidden_states: torch.Tensor, kv_cache: torch.Tensor, slot_mapping: torch.Tensor,
                query_lens: tuple[int, ...], is_prefill: bool = True) -> torch.Tensor:
        attn_metadata = AttnMetadata(slot_mapping, query_lens, is_prefill)
        split_bs_point = self.can_run_ms(attn_metadata)
        if split_bs_point >= 0:
            hidden_states, residual = self._forward_ms_layers(hidden_states, kv_cache, attn_metadata, split_bs_point)
        else:
            residual = None
            for layer in self.layers:
                hidden_states, residual = layer(hidden_states, residual, kv_cache, attn_metadata)
        return self.norm(hidden_states, residual)[0]
