"""The undecorated parts of DeepSeek-V4's decode attention, shared by the decorated model and its twin.

Shaped after cann-recipes-infer ``models/deepseek_v4/models/modeling_deepseek.py`` and
``models/deepseek_v4/models/modules/indexer.py``: a per-token dynamic quantization
(``npu_dynamic_quant``) and the quantized ``wq_b`` that takes its scale, the
rotary embedding applied in place to the last ``rope_dim`` channels
(``inplace_partial_rotary_mul``, interleaved), the window cache update
(``scatter_nd_update_asc``: this step's ``kv`` written into ``win_kv`` in place at
its slots), the compressor (``Compressor``: a projection of the tokens pooled over
``compress_ratio`` consecutive tokens, written in place into its compressed
cache), the lightning indexer kernel (top-k compressed entries per token) and the
sparse attention kernel over the window plus the compressed entries (all of them
in a c128a layer, the indexer's top-k in a c4a layer). All CPU stand-ins with the
upstream kernels' dataflow.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["Compressor", "QuantLinear", "RMSNorm", "dynamic_quant", "hadamard", "inplace_partial_rotary_mul",
           "lightning_indexer", "sparse_attention", "update_win_kv"]


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, eps=1e-6)


def dynamic_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row int8 quantization kept in float: (values, scale of shape [..., 1])."""
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
    return torch.round(x / scale), scale


class QuantLinear(nn.Module):
    """``wq_b(qr, dynamic_scale=qr_scale)``: a matmul of the quantized rows, dequantized by their scale."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * in_features**-0.5)

    def forward(self, x: torch.Tensor, dynamic_scale: torch.Tensor) -> torch.Tensor:
        return (x @ self.weight.T) * dynamic_scale


def inplace_partial_rotary_mul(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rope_dim: int) -> None:
    """Rotates the last ``rope_dim`` channels of ``x`` (interleaved pairs) in place; ``cos``/``sin``: [T, rope/2]."""
    shape = (x.shape[0],) + (1,) * (x.dim() - 2) + (rope_dim // 2,)
    cos, sin = cos.view(shape), sin.view(shape)
    rope = x[..., -rope_dim:]
    even, odd = rope[..., 0::2], rope[..., 1::2]
    rope.copy_(torch.stack((even * cos - odd * sin, odd * cos + even * sin), dim=-1).flatten(-2))


def update_win_kv(kv: torch.Tensor, win_kv_slot_mapping: torch.Tensor, win_cache: torch.Tensor) -> None:
    win_cache.index_copy_(0, win_kv_slot_mapping, kv)


def hadamard(dim: int) -> torch.Tensor:
    """The orthonormal Sylvester Hadamard matrix of size ``dim`` (a power of two), as ``get_had_pow2``."""
    h = torch.ones(1, 1)
    while h.shape[0] < dim:
        h = torch.cat((torch.cat((h, h), 1), torch.cat((h, -h), 1)), 0)
    return h * dim**-0.5


class Compressor(nn.Module):
    """Projects the tokens, pools each ``compress_ratio`` consecutive ones, writes the groups into ``cache``."""

    def __init__(self, hidden: int, head_dim: int, compress_ratio: int) -> None:
        super().__init__()
        self.compress_ratio = compress_ratio
        self.wkv = nn.Linear(hidden, head_dim, bias=False)
        self.wgate = nn.Linear(hidden, head_dim, bias=False)
        self.norm = RMSNorm(head_dim)

    def forward(self, x: torch.Tensor, cache: torch.Tensor) -> None:
        groups = torch.arange(x.shape[0]) // self.compress_ratio
        count = (x.shape[0] + self.compress_ratio - 1) // self.compress_ratio
        weight = self.wgate(x).sigmoid()
        pooled = torch.zeros(count, cache.shape[-1]).index_add_(0, groups, self.wkv(x) * weight)
        cache[:count].copy_(self.norm(pooled))


def lightning_indexer(q: torch.Tensor, q_scale: torch.Tensor, weights: torch.Tensor, li_cache: torch.Tensor,
                      valid: torch.Tensor, topk: int) -> torch.Tensor:
    """Per token, the ``topk`` compressed entries scored highest by the weighted heads (entries past ``valid``
    excluded)."""
    scores = torch.einsum("thd,sd->ths", q * q_scale, li_cache).relu()
    scores = (scores * weights.unsqueeze(-1)).sum(dim=1)
    scores = scores.masked_fill(torch.arange(li_cache.shape[0]) >= valid, float("-inf"))
    return scores.topk(topk, dim=-1).indices


def sparse_attention(q: torch.Tensor, win_kv: torch.Tensor, cmp_kv: torch.Tensor | None,
                     cmp_sparse_indices: torch.Tensor | None, valid: torch.Tensor) -> torch.Tensor:
    """MQA over the window cache, plus the compressed entries: the chosen ones per token (c4a), else every valid
    one (c128a); the cache rows are both keys and values. Returns [T, heads * head_dim]."""
    scale = q.shape[-1] ** -0.5
    scores, values = torch.einsum("thd,sd->ths", q, win_kv) * scale, win_kv.expand(q.shape[0], -1, -1)
    if cmp_kv is not None and cmp_sparse_indices is not None:
        chosen = cmp_kv[cmp_sparse_indices]
        scores = torch.cat((scores, torch.einsum("thd,tkd->thk", q, chosen) * scale), dim=-1)
        values = torch.cat((values, chosen), dim=1)
    elif cmp_kv is not None:
        masked = (torch.einsum("thd,sd->ths", q, cmp_kv) * scale).masked_fill(
            torch.arange(cmp_kv.shape[0]) >= valid, float("-inf"))
        scores = torch.cat((scores, masked), dim=-1)
        values = torch.cat((values, cmp_kv.expand(q.shape[0], -1, -1)), dim=1)
    return torch.einsum("ths,tsd->thd", scores.softmax(dim=-1), values).flatten(1)
