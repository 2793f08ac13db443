"""The undecorated parts of DeepSeek-V3.2 (DSA) attention on Ascend, shared by the decorated model and its twin.

Shaped after sglang ``python/sglang/srt/hardware_backend/npu/modules/deepseek_v2_attention_mla_npu.py``
and the modules it drives: ``ReplicatedLinear`` (a projection returning ``(output, bias)``),
``RMSNorm``, the rotary embedding applied to ``q_pe`` and ``k_pe``, the KV pool reached
through ``forward_batch.token_to_kv_pool`` (the latent cache, the rope cache and the
indexer's key cache, one slice per layer, written in place at ``out_cache_loc``), the
``BumpAllocator`` handed through, the fused ``mla_preprocess`` kernel (its CPU stand-in
``mla_prolog``: the whole MLA prologue, writing the latent and rope caches in place),
the DSA lightning indexer (single-stream here: its own streams are covered by
``cann_v32_indexer``) and ``attn_mqa`` (saves this batch's latent keys in place, then
attends over the top-k slots the indexer chose).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["BumpAllocator", "ForwardBatch", "Indexer", "KVPool", "MLP", "RMSNorm", "ReplicatedLinear",
           "RotaryEmbedding", "attn_mqa", "batch_matmul_transpose", "mla_prolog"]


class ReplicatedLinear(nn.Module):
    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * n_in**-0.5)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return F.linear(x, self.weight), None


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, eps=1e-6)


class MLP(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = ReplicatedLinear(hidden, 2 * inter)
        self.down_proj = ReplicatedLinear(inter, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x)[0].chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)[0]


class RotaryEmbedding(nn.Module):
    """NeoX-style rotary embedding over a ``cos_sin_cache`` buffer indexed by position."""

    def __init__(self, rope_dim: int, max_positions: int) -> None:
        super().__init__()
        freqs = 1.0 / (100.0 ** (torch.arange(0, rope_dim, 2, dtype=torch.float32) / rope_dim))
        angles = torch.arange(max_positions, dtype=torch.float32)[:, None] * freqs
        self.register_buffer("cos_sin_cache", torch.cat([angles.cos(), angles.sin()], dim=-1))

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        cos, sin = self.cos_sin_cache[positions].chunk(2, dim=-1)
        cos, sin = cos.view(-1, *([1] * (x.dim() - 2)), cos.shape[-1]), sin.view(-1, *([1] * (x.dim() - 2)), sin.shape[-1])
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def forward(self, positions: torch.Tensor, q_pe: torch.Tensor,
                k_pe: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.rotate(q_pe, positions), self.rotate(k_pe, positions)


class KVPool:
    """``token_to_kv_pool``: per layer, the latent (``ckv``) and rope caches and the indexer's key cache."""

    def __init__(self, ckv_cache: torch.Tensor, k_rope_cache: torch.Tensor, index_k_cache: torch.Tensor) -> None:
        self.ckv_cache, self.k_rope_cache, self.index_k_cache = ckv_cache, k_rope_cache, index_k_cache

    def get_kv_buffer(self, layer_id: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.ckv_cache[layer_id], self.k_rope_cache[layer_id]

    def set_kv_buffer(self, layer_id: int, loc: torch.Tensor, k_nope: torch.Tensor, k_pe: torch.Tensor) -> None:
        self.ckv_cache[layer_id].index_copy_(0, loc, k_nope.reshape(loc.shape[0], -1))
        self.k_rope_cache[layer_id].index_copy_(0, loc, k_pe.reshape(loc.shape[0], -1))

    def get_index_k_buffer(self, layer_id: int) -> torch.Tensor:
        return self.index_k_cache[layer_id]

    def set_index_k_buffer(self, layer_id: int, loc: torch.Tensor, k: torch.Tensor) -> None:
        self.index_k_cache[layer_id].index_copy_(0, loc, k.reshape(loc.shape[0], -1))


class ForwardBatch:
    """What the attention reads of sglang's ``ForwardBatch``: the mode, the cache slots, the KV pool."""

    def __init__(self, is_decode: bool, out_cache_loc: torch.Tensor, token_to_kv_pool: KVPool) -> None:
        self.is_decode, self.out_cache_loc, self.token_to_kv_pool = is_decode, out_cache_loc, token_to_kv_pool


class BumpAllocator:
    """sglang's ``BumpAllocator``: zero-initialized scratch handed through the attention untouched here."""

    def __init__(self, buffer: torch.Tensor) -> None:
        self.buffer, self.pointer = buffer, 0


def mla_prolog(pre: nn.Module, positions: torch.Tensor, hidden_states: torch.Tensor,
               forward_batch: ForwardBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """CPU stand-in for the fused ``mla_preprocess`` kernel: q/kv down projection, both norms, the q up
    projection absorbed with ``w_kc``, rotary, and the latent and rope keys written into the cache in place."""
    q, latent_cache = pre.fused_qkv_a_proj_with_mqa(hidden_states)[0].split(
        [pre.q_lora_rank, pre.kv_lora_rank + pre.qk_rope_head_dim], dim=-1)
    q = pre.q_b_proj(pre.q_a_layernorm(q))[0].view(-1, pre.num_local_heads, pre.qk_head_dim)
    q_nope, q_pe = q.split([pre.qk_nope_head_dim, pre.qk_rope_head_dim], dim=-1)
    q_nope_out = torch.bmm(q_nope.transpose(0, 1), pre.w_kc).transpose(0, 1)
    k_nope = pre.kv_a_layernorm(latent_cache[..., : pre.kv_lora_rank]).unsqueeze(1)
    q_pe, k_pe = pre.rotary_emb(positions, q_pe, latent_cache[..., pre.kv_lora_rank :].unsqueeze(1))
    forward_batch.token_to_kv_pool.set_kv_buffer(pre.layer_id, forward_batch.out_cache_loc, k_nope, k_pe)
    return q_pe, k_pe, q_nope_out, k_nope


class Indexer(nn.Module):
    """The DSA lightning indexer: query heads from ``q_lora``, one key per token written into the index-k
    cache in place, per-head weights, the top-k cache slots per token."""

    def __init__(self, hidden: int, q_lora_rank: int, heads: int, head_dim: int, rope_dim: int, index_topk: int,
                 max_positions: int) -> None:
        super().__init__()
        self.n_heads, self.head_dim, self.rope_head_dim, self.index_topk = heads, head_dim, rope_dim, index_topk
        self.wq_b = ReplicatedLinear(q_lora_rank, heads * head_dim)
        self.wk = ReplicatedLinear(hidden, head_dim)
        self.k_norm = RMSNorm(head_dim)
        self.weights_proj = ReplicatedLinear(hidden, heads)
        self.rotary_emb = RotaryEmbedding(rope_dim, max_positions)

    def _rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x_pe, x_nope = x.split([self.rope_head_dim, self.head_dim - self.rope_head_dim], dim=-1)
        return torch.cat([self.rotary_emb.rotate(x_pe, positions), x_nope], dim=-1)

    def forward(self, x: torch.Tensor, q_lora: torch.Tensor, positions: torch.Tensor, forward_batch: ForwardBatch,
                layer_id: int) -> torch.Tensor:
        q = self._rope(self.wq_b(q_lora)[0].view(-1, self.n_heads, self.head_dim), positions)
        k = self._rope(self.k_norm(self.wk(x)[0]), positions)
        pool = forward_batch.token_to_kv_pool
        pool.set_index_k_buffer(layer_id, forward_batch.out_cache_loc, k)
        weights = self.weights_proj(x)[0] * self.n_heads**-0.5
        scores = (F.relu(q @ pool.get_index_k_buffer(layer_id).T) * weights.unsqueeze(-1)).sum(dim=1)
        return scores.topk(self.index_topk, dim=-1).indices


def attn_mqa(q_nope_out: torch.Tensor, k_nope: torch.Tensor, forward_batch: ForwardBatch, layer_id: int,
             q_rope: torch.Tensor, k_rope: torch.Tensor, topk_indices: torch.Tensor) -> torch.Tensor:
    """The sparse MLA attention: saves the batch's latent and rope keys, then attends over the top-k slots."""
    pool = forward_batch.token_to_kv_pool
    pool.set_kv_buffer(layer_id, forward_batch.out_cache_loc, k_nope, k_rope)
    ckv, k_rope_cache = pool.get_kv_buffer(layer_id)
    keys, rope_keys = ckv[topk_indices], k_rope_cache[topk_indices]  # [T, K, C], [T, K, R]
    scores = q_nope_out @ keys.transpose(1, 2) + q_rope @ rope_keys.transpose(1, 2)  # [T, H, K]
    scale = (q_nope_out.shape[-1] + q_rope.shape[-1]) ** -0.5
    return (scores * scale).softmax(dim=-1) @ keys  # [T, H, C]


def batch_matmul_transpose(x: torch.Tensor, weight: torch.Tensor, out: torch.Tensor) -> None:
    """``torch.ops.npu.batch_matmul_transpose``: ``out[t, h] = x[t, h] @ weight[h]``, written into ``out``."""
    out.copy_(torch.bmm(x.transpose(0, 1), weight).transpose(0, 1))
