"""vllm-ascend's Qwen3-MoE dual-batch overlap by hand: per layer and micro-batch, the dispatch and the combine on
"communicate_stream", each after one fork and joined where its result is first read.

As upstream's ``_forward_ms_layer_alltoallv_finegrained``: micro-batch ``i``'s all-to-all
dispatch (``MOE_BEFORE_COMM`` / ``MOE_AFTER_COMM``) reads its permuted tokens, made on the
main stream, and overlaps the next micro-batch's attention; the main stream waits for it
before that micro-batch's grouped matmuls. Its combine (``FFN_COM_FINISH`` /
``FFN_AR_FINISH``) reads the experts' output, made on the main stream, and overlaps the
next micro-batch's experts, then the next layer's attention of the micro-batch before;
the next layer waits for it before the micro-batch's input norm, the merge after the last
layer waits for the last one (the stream runs in order: that covers both).
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.vllm_qwen3_dbo.layers import AttnMetadata, find_best_split_point, gating, split_micro_batch
from npudsl import runtime

SOURCE = "corpus:vllm_qwen3_dbo"
USER_EVENTS = ()
COMM = "communicate_stream"


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _attention_and_dispatch(self, n: int, x: torch.Tensor, residual: torch.Tensor | None, kv_cache: torch.Tensor,
                                meta: AttnMetadata, i: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        layer = self.m.layers[n]
        x, residual = layer.input_layernorm(x, residual)
        x, residual = layer.post_attention_layernorm(layer.self_attn(x, kv_cache[n], meta), residual)
        dispatcher = layer.experts.token_dispatchers[i]
        dispatcher.preprocess_and_permtute1(x, *gating(layer.gate, x, self.m.top_k))
        runtime.record(f"before_dispatch{i}")
        with runtime.stream(COMM):
            runtime.wait(f"before_dispatch{i}")
            runtime.record_stream(dispatcher.permuted_tokens, COMM)
            dispatcher.dispatch_alltoall()
            tokens, tokens_per_expert = dispatcher.permute2()
            runtime.record(f"after_dispatch{i}")
        return tokens, tokens_per_expert, residual

    def _experts_and_combine(self, n: int, tokens: torch.Tensor, tokens_per_expert: torch.Tensor, num_tokens: int,
                             i: int, last: tuple[bool, bool]) -> torch.Tensor:
        """``last``: (the last layer, its last micro-batch): the merge waits for that combine right away, so it
        keeps nothing for the stream, and the other micro-batch's combine needs no event of its own."""
        layer = self.m.layers[n]
        dispatcher = layer.experts.token_dispatchers[i]
        runtime.wait(f"after_dispatch{i}")
        out = layer.experts.grouped_mlp(tokens, tokens_per_expert)
        runtime.record(f"before_combine{i}")
        with runtime.stream(COMM):
            runtime.wait(f"before_combine{i}")
            if last != (True, True):
                runtime.record_stream(out, COMM)
                runtime.record_stream(dispatcher.topk_weights, COMM)
                runtime.record_stream(dispatcher.reversed_mapping, COMM)
            hidden = dispatcher.unpermute(dispatcher.combine_alltoall(out)).view(num_tokens, -1)
            if last != (True, False):
                runtime.record(f"after_combine{i}")
        return hidden

    def forward(self, x: torch.Tensor, kv_cache: torch.Tensor, slot_mapping: torch.Tensor,
                query_lens: tuple[int, ...], is_prefill: bool = True) -> torch.Tensor:
        m, meta = self.m, AttnMetadata(slot_mapping, query_lens, is_prefill)
        split = find_best_split_point(query_lens, 4) if is_prefill else -1
        if split < 0:
            residual = None
            for n in range(len(m.layers)):
                x, residual = m._layer(n, x, residual, kv_cache, meta, 0)
            return m.norm(x, residual)[0]
        metas, [xs, residuals] = split_micro_batch(split, [x, None], meta)
        for n in range(len(m.layers)):
            dispatched = []
            for i in range(len(metas)):
                if n > 0:
                    runtime.wait(f"after_combine{i}")
                tokens, tokens_per_expert, residuals[i] = self._attention_and_dispatch(n, xs[i], residuals[i],
                                                                                       kv_cache, metas[i], i)
                dispatched.append((tokens, tokens_per_expert, xs[i].shape[0]))
            for i in range(len(metas)):
                last = (n == len(m.layers) - 1, i == len(metas) - 1)
                xs[i] = self._experts_and_combine(n, *dispatched[i], i, last)
        runtime.wait(f"after_combine{len(metas) - 1}")
        return m.norm(torch.cat(xs), torch.cat(residuals))[0]
