"""CPU stand-ins for DeepSeek-V4's NPU kernels (no streams), shared by the decorated model and its twin.

Shaped after vllm-ascend: ``vllm_ascend/ops/cv_linear.py`` (``CVLinearWrapper``: a
linear split into a quantize step for the vector cores and a matmul for the cube
cores), ``torch.ops._C_ascend.inplace_partial_rotary_mul`` (the rotary embedding
written in place into the rope part of a view), ``DeviceOperator.dsa_kv_compress_scatter``
(rows written into a cache in place at their slots), the compressor (a projection
pooled over groups of ``compress_ratio`` tokens; the tokens left over go into its
state cache in place), the indexer's quantize-and-scatter steps and its top-k
selection (``npu_vllm_quant_lightning_indexer``), and the DSA sparse attention over the
window cache and the chosen compressed rows. Values quantized to int8 stay in float
tensors.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["CVLinearWrapper", "Compressor", "QuantLinear", "RMSNorm", "dsa_kv_compress_scatter", "dynamic_quant",
           "hadamard", "hadamard_linear", "hadamard_scale", "inplace_partial_rotary_mul", "quantize_key_and_update_cache",
           "select_topk", "sparse_attn", "update_scale_cache"]


def dynamic_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``npu_dynamic_quant``: int8 values (kept in floats) and the per-row scale."""
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
    return torch.round(x / scale), scale


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, eps=1e-6)


class QuantLinear(nn.Module):
    """A W8A8 linear: int8 weights (in floats) with a per-channel scale."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        weight = torch.randn(out_features, in_features) * in_features**-0.5
        scale = weight.abs().amax(dim=-1) / 127
        self.weight = nn.Parameter(torch.round(weight / scale.unsqueeze(-1)), requires_grad=False)
        self.weight_scale = nn.Parameter(scale, requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return CVLinearWrapper(self).matmul(*CVLinearWrapper(self).quantize(x))


class CVLinearWrapper:
    """``CVLinearWrapper``: ``quantize`` (vector cores) then ``matmul`` (cube cores) of a wrapped W8A8 linear."""

    def __init__(self, linear: QuantLinear) -> None:
        self.linear = linear

    def quantize(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return dynamic_quant(x)

    def matmul(self, x: torch.Tensor, pertoken_scale: torch.Tensor | None) -> torch.Tensor:
        out = x @ self.linear.weight.T * self.linear.weight_scale
        return out if pertoken_scale is None else out * pertoken_scale


def inplace_partial_rotary_mul(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, nope_dim: int) -> None:
    """Rotates the last ``x.shape[-1] - nope_dim`` features of ``x`` in place (``x`` is ``[T, 1, ..., D]``)."""
    rope = x[..., nope_dim:]
    shape = (cos.shape[0],) + (1,) * (x.dim() - 2) + (cos.shape[-1],)
    half = rope.shape[-1] // 2
    rotated = torch.cat([-rope[..., half:], rope[..., :half]], dim=-1)
    rope.copy_(rope * cos.view(shape) + rotated * sin.view(shape))


def dsa_kv_compress_scatter(cache: torch.Tensor, kv: torch.Tensor, slot_mapping: torch.Tensor) -> None:
    cache.index_copy_(0, slot_mapping, kv.reshape(slot_mapping.shape[0], -1))


def hadamard(dim: int) -> torch.Tensor:
    h = torch.ones(1, 1)
    while h.shape[0] < dim:
        h = torch.cat([torch.cat([h, h], dim=1), torch.cat([h, -h], dim=1)], dim=0)
    return h


def hadamard_linear(x: torch.Tensor, matrix: torch.Tensor) -> tuple[torch.Tensor, tuple[int, ...], int]:
    return F.linear(x.reshape(-1, x.shape[-1]), matrix), tuple(x.shape), x.shape[-1]


def hadamard_scale(out: torch.Tensor, x_shape: tuple[int, ...], dim: int, scale: float = 1.0) -> torch.Tensor:
    return (out * scale).view(*x_shape[:-1], dim)


class Compressor(nn.Module):
    """Pools each full group of ``ratio`` tokens into one row; the rows left over go into ``state_cache`` in place."""

    def __init__(self, hidden: int, dim: int, ratio: int) -> None:
        super().__init__()
        self.ratio = ratio
        self.wkv = nn.Linear(hidden, dim, bias=False)
        self.wgate = nn.Linear(hidden, dim, bias=False)

    def forward(self, hidden_states: torch.Tensor, state_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows, kv, gate = hidden_states.shape[0] // self.ratio, self.wkv(hidden_states), self.wgate(hidden_states)
        full = rows * self.ratio
        state_cache[: hidden_states.shape[0] - full].copy_(kv[full:])
        score = gate[:full].view(rows, self.ratio, gate.shape[-1]).softmax(dim=1)
        return (kv[:full].view(rows, self.ratio, kv.shape[-1]) * score).sum(dim=1), torch.arange(rows)


def quantize_key_and_update_cache(key: torch.Tensor, key_cache: torch.Tensor,
                                  slot_mapping: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``indexer_quant_scatter_part1``: the keys quantized and written into ``key_cache``; returns them and scales."""
    key, key_scale = dynamic_quant(key)
    key_cache.index_copy_(0, slot_mapping, key)
    return key, key_scale


def update_scale_cache(key_scale: torch.Tensor, scale_cache: torch.Tensor, slot_mapping: torch.Tensor) -> None:
    """``dsa_indexer_scatter_scale_part3``: the key scales written into ``scale_cache`` in place."""
    scale_cache.index_copy_(0, slot_mapping, key_scale)


def select_topk(query: torch.Tensor, weights: torch.Tensor, query_scale: torch.Tensor, key_cache: torch.Tensor,
                scale_cache: torch.Tensor, index_topk: int) -> torch.Tensor:
    """The lightning indexer: per token, the ``index_topk`` compressed rows with the best weighted scores."""
    scores = torch.einsum("thd,sd->ths", query * query_scale, key_cache * scale_cache).relu()
    return (scores * weights.unsqueeze(-1)).sum(dim=1).topk(index_topk, dim=-1).indices


def sparse_attn(q: torch.Tensor, ori_kv: torch.Tensor, sinks: torch.Tensor, softmax_scale: float,
                cmp_kv: torch.Tensor | None = None, cmp_sparse_indices: torch.Tensor | None = None) -> torch.Tensor:
    """Each token attends over the window cache and, given indices, its chosen compressed rows (one sink logit)."""
    keys = ori_kv.unsqueeze(0).expand(q.shape[0], -1, -1)
    if cmp_kv is not None and cmp_sparse_indices is not None:
        keys = torch.cat([keys, cmp_kv[cmp_sparse_indices]], dim=1)
    scores = torch.einsum("thd,tsd->ths", q, keys) * softmax_scale
    sink = sinks.view(1, -1, 1).expand(q.shape[0], -1, 1)
    probs = torch.cat([scores, sink], dim=-1).softmax(dim=-1)[..., :-1]
    return torch.einsum("ths,tsd->thd", probs, keys)
