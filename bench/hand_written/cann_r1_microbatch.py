"""DeepSeek-R1's prefill micro-batches by hand: per MoE layer and micro-batch, the dispatch and the combine on
"stream1", each after one fork and joined where its result is first read.

As upstream's ``forward_microbatch_v1``: micro-batch ``i``'s dispatch waits for the record after its routing
(``event_routing_dispatch``) and overlaps the other micro-batch's attention and routing and both shared
experts; the main stream waits for it (``event_dispatch_expert``) before the experts. Its combine waits for
the experts (``event_expert_combine``); the main stream waits for it (``event_combine_finalize_routing``)
before the finalize: micro-batch 0's in the layer, micro-batch 1's at the next layer, after micro-batch 0's
attention, or after the last layer. Every event is one of its own per micro-batch, so no wait waits for the
other micro-batch's call. The dispatch's inputs (the counts, the quantized rows, their scales) and the
combine's (the experts' rows), made on the main stream, are last read on "stream1" while the main stream
allocates on: each is kept for it (``record_stream``). The side stream's results need nothing: the main
stream reads them after the join, and "stream1" allocates again only after waiting for a record made after
those reads.
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.cann_r1_microbatch.layers import rotary
from npudsl import runtime

SOURCE = "corpus:cann_r1_microbatch"
USER_EVENTS = ()
S1 = "stream1"


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _attention(self, n: int, mb: dict, x: torch.Tensor, residual: torch.Tensor | None,
                   kv_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        layer = self.m.layers[n]
        x, residual = layer.input_layernorm(x, residual)
        return layer.self_attn(x, mb["cos_sin"], kv_cache[n], mb["slot_mapping"], mb["seq_lens"]), residual

    def _route_and_dispatch(self, moe: nn.Module, x: torch.Tensor, i: int) -> dict:
        routed = dict(zip(("expanded_x", "row_idx", "tokens_per_expert", "scale", "topk_weight"),
                          moe.forward_gate_init_routing(x)))
        runtime.record(f"routing_dispatch{i}")
        with runtime.stream(S1):
            runtime.wait(f"routing_dispatch{i}")
            for name in ("tokens_per_expert", "expanded_x", "scale"):
                runtime.record_stream(routed[name], S1)
            routed["dispatched"] = moe.dispatch_double_routing(routed["tokens_per_expert"], routed["expanded_x"],
                                                               routed["scale"])
            runtime.record(f"dispatch_expert{i}")
        return routed

    def _expert_and_combine(self, moe: nn.Module, routed: dict, i: int) -> torch.Tensor:
        group, gathered, gathered_scale, input_splits, output_splits = routed["dispatched"]
        runtime.wait(f"dispatch_expert{i}")
        new_x = moe.forward_expert(gathered, group, gathered_scale)
        runtime.record(f"expert_combine{i}")
        with runtime.stream(S1):
            runtime.wait(f"expert_combine{i}")
            runtime.record_stream(new_x, S1)
            combined = moe.forward_combine_double_routing(new_x, routed["expanded_x"], input_splits, output_splits)
            runtime.record(f"combine_finalize{i}")
        return combined

    def _finalize(self, moe: nn.Module, x: torch.Tensor, routed: dict, i: int) -> torch.Tensor:
        runtime.wait(f"combine_finalize{i}")
        return moe.forward_finalize_routing(x, routed["combined"], routed["shared"], routed["topk_weight"],
                                            routed["row_idx"])

    def _moe_layer(self, n: int, mbs: list[dict], xs: list, residuals: list, kv_cache: torch.Tensor,
                   pending: dict | None) -> dict:
        """One MoE layer; ``pending``: micro-batch 1 of the layer before, finalized here after micro-batch 0's
        attention. Returns micro-batch 1's, to finalize in the next layer."""
        layer, routed = self.m.layers[n], []
        for i in range(2):
            xs[i], residuals[i] = self._attention(n, mbs[i], xs[i], residuals[i], kv_cache)
            if i == 0 and pending is not None:
                xs[1] = self._finalize(pending["moe"], xs[1], pending, 1)
            xs[i], residuals[i] = layer.post_attention_layernorm(xs[i], residuals[i])
            routed.append(self._route_and_dispatch(layer.mlp, xs[i], i))
        for i in range(2):
            routed[i]["shared"] = layer.mlp.forward_shared_expert(xs[i], True)
        for i in range(2):
            routed[i]["combined"] = self._expert_and_combine(layer.mlp, routed[i], i)
        xs[0] = self._finalize(layer.mlp, xs[0], routed[0], 0)
        return {**routed[1], "moe": layer.mlp}

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor, kv_cache: torch.Tensor,
                slot_mapping: torch.Tensor, seq_lens: tuple[int, ...], is_prefill: bool = True) -> torch.Tensor:
        m = self.m
        if not is_prefill:
            return m.run(input_ids, position_ids, kv_cache, slot_mapping, seq_lens)
        split = len(seq_lens) // 2
        cut = sum(seq_lens[:split])
        parts = ((slice(None, cut), seq_lens[:split]), (slice(cut, None), seq_lens[split:]))
        mbs = [{"slot_mapping": slot_mapping[rows], "seq_lens": lens, "cos_sin": rotary(position_ids[rows],
                m.embed_tokens.embedding_dim)} for rows, lens in parts]
        xs, residuals = [m.embed_tokens(input_ids[rows]) for rows, _ in parts], [None, None]
        pending = None
        for n, layer in enumerate(m.layers):
            if hasattr(layer.mlp, "gate"):
                pending = self._moe_layer(n, mbs, xs, residuals, kv_cache, pending)
                continue
            for i in range(2):
                xs[i], residuals[i] = self._attention(n, mbs[i], xs[i], residuals[i], kv_cache)
                xs[i], residuals[i] = layer.post_attention_layernorm(xs[i], residuals[i])
                xs[i] = layer.mlp(xs[i])
        xs[1] = self._finalize(pending["moe"], xs[1], pending, 1)
        return torch.cat([m.norm(x, r)[0] for x, r in zip(xs, residuals)], dim=0)
