"""The weights and stand-in kernels of the MLA prefill (no streams): used by the decorated model and its twin.

After omni-infer ``omni/models/deepseek/deepseek_v3_a2.py``: ``Linear`` returns
``(out, None)`` as the parallel linears do; ``rotate`` stands in for
``npu_interleave_rope``; the RoPE tables are gathered per position
(``get_cos_sin``); the attention is a causal softmax attention on CPU.
"""

from __future__ import annotations

import torch
from torch import nn


class Linear(nn.Linear):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        return super().forward(x), None


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    scores = torch.einsum("tnd,snd->nts", q, k) * q.shape[-1] ** -0.5
    mask = torch.ones(q.shape[0], k.shape[0], dtype=torch.bool).tril()
    return torch.einsum("nts,snd->tnd", scores.masked_fill(~mask, float("-inf")).softmax(dim=-1), v)


class PrefillWeights(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, kv_lora_rank: int, heads: int, nope_dim: int, rope_dim: int,
                 v_dim: int, max_positions: int) -> None:
        super().__init__()
        self.heads, self.nope_dim, self.rope_dim, self.v_dim = heads, nope_dim, rope_dim, v_dim
        self.kv_lora_rank = kv_lora_rank
        self.q_a_proj = Linear(hidden, q_lora_rank, bias=False)
        self.q_a_layernorm = nn.LayerNorm(q_lora_rank)
        self.q_b_proj = Linear(q_lora_rank, heads * (nope_dim + rope_dim), bias=False)
        self.kv_a_proj_with_mqa = Linear(hidden, kv_lora_rank + rope_dim, bias=False)
        self.kv_a_layernorm = nn.LayerNorm(kv_lora_rank)
        self.kv_b_proj = Linear(kv_lora_rank, heads * (nope_dim + v_dim), bias=False)
        self.o_proj = Linear(heads * v_dim, hidden, bias=False)
        angles = torch.arange(max_positions, dtype=torch.float32)[:, None] / 10.0 ** torch.arange(rope_dim // 2)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos_cached", angles.cos(), persistent=False)
        self.register_buffer("sin_cached", angles.sin(), persistent=False)

    def q_path(self, hidden_states: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(hidden_states)[0]))[0]
        q_nope, q_pe = q.view(-1, self.heads, self.nope_dim + self.rope_dim).split([self.nope_dim, self.rope_dim], -1)
        return torch.cat([q_nope, rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1))], dim=-1)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.o_proj(causal_attention(q, k, v).flatten(1))[0]
