"""Stand-ins for the layers and kernels the torchair MLA calls (no streams): used by the model and its twin.

``MLAWeights`` holds the weights (the decorated model and the twin subclass it);
``Linear`` returns ``(out, None)`` as vLLM's parallel linears do (callers write
``self.q_proj(x)[0]``); ``rms_norm``, ``rotate`` and ``write_slots`` stand in for
the RMS norm, ``npu_interleave_rope`` and the cache write of
``npu_kv_rmsnorm_rope_cache`` (vllm-ascend ``vllm_ascend/torchair/torchair_mla.py``).
"""

from __future__ import annotations

import torch
from torch import nn


class Linear(nn.Linear):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        return super().forward(x), None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def write_slots(cache: torch.Tensor, slots: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    cache.index_copy_(0, slots, values)
    return cache


def rope_tables(max_positions: int, rope_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    angles = torch.arange(max_positions, dtype=torch.float32)[:, None] / 10.0 ** torch.arange(rope_dim // 2)
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos(), angles.sin()


class MLAWeights(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, kv_lora_rank: int, heads: int, nope_dim: int, rope_dim: int,
                 v_dim: int, max_positions: int) -> None:
        super().__init__()
        self.heads, self.nope_dim, self.rope_dim, self.kv_lora_rank = heads, nope_dim, rope_dim, kv_lora_rank
        self.q_a_proj = Linear(hidden, q_lora_rank, bias=False)
        self.q_a_layernorm = nn.LayerNorm(q_lora_rank)
        self.q_proj = Linear(q_lora_rank, heads * (nope_dim + rope_dim), bias=False)
        self.kv_a_proj_with_mqa = Linear(hidden, kv_lora_rank + rope_dim, bias=False)
        self.kv_a_layernorm_weight = nn.Parameter(1 + 0.1 * torch.randn(kv_lora_rank))
        self.W_UK_T = nn.Parameter(torch.randn(heads, nope_dim, kv_lora_rank) * nope_dim**-0.5)
        self.W_UV = nn.Parameter(torch.randn(heads, kv_lora_rank, v_dim) * kv_lora_rank**-0.5)
        self.o_proj = Linear(heads * v_dim, hidden, bias=False)
        cos, sin = rope_tables(max_positions, rope_dim)
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)
