"""Single-stream twin of :mod:`corpus.vllm_qwen3_dbo` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn

from .layers import AttnMetadata, Attention, GroupedExperts, RMSNorm, find_best_split_point, gating
from .layers import split_micro_batch


class _Layer(nn.Module):
    def __init__(self, hidden: int, moe_inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.self_attn = Attention(hidden)
        self.input_layernorm = RMSNorm(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.experts = GroupedExperts(hidden, moe_inter, experts, top_k)


class CustomQwen3DBOMoEModel(nn.Module):
    def __init__(self, hidden: int, moe_inter: int, experts: int, top_k: int, layers: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.layers = nn.ModuleList(_Layer(hidden, moe_inter, experts, top_k) for _ in range(layers))
        self.norm = RMSNorm(hidden)

    def _layer(self, n: int, x: torch.Tensor, residual: torch.Tensor | None, kv_cache: torch.Tensor,
               meta: AttnMetadata, micro_batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        layer = self.layers[n]
        x, residual = layer.input_layernorm(x, residual)
        x, residual = layer.post_attention_layernorm(layer.self_attn(x, kv_cache[n], meta), residual)
        dispatcher = layer.experts.token_dispatchers[micro_batch]
        dispatcher.preprocess_and_permtute1(x, *gating(layer.gate, x, self.top_k))
        dispatcher.dispatch_alltoall()
        out = layer.experts.grouped_mlp(*dispatcher.permute2())
        return dispatcher.unpermute(dispatcher.combine_alltoall(out)).view(x.shape[0], -1), residual

    def forward(self, x: torch.Tensor, kv_cache: torch.Tensor, slot_mapping: torch.Tensor,
                query_lens: tuple[int, ...], is_prefill: bool = True) -> torch.Tensor:
        meta = AttnMetadata(slot_mapping, query_lens, is_prefill)
        split = find_best_split_point(query_lens, 4) if is_prefill else -1
        if split < 0:
            residual = None
            for n in range(len(self.layers)):
                x, residual = self._layer(n, x, residual, kv_cache, meta, 0)
            return self.norm(x, residual)[0]
        metas, [xs, residuals] = split_micro_batch(split, [x, None], meta)
        for n in range(len(self.layers)):
            for i in range(len(metas)):
                xs[i], residuals[i] = self._layer(n, xs[i], residuals[i], kv_cache, metas[i], i)
        return self.norm(torch.cat(xs), torch.cat(residuals))[0]
