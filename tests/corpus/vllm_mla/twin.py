"""Single-stream twin of :mod:`corpus.vllm_mla` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .rope import rotate


class _Impl(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, kv_lora_rank: int, heads: int, nope_dim: int, rope_dim: int,
                 v_dim: int) -> None:
        super().__init__()
        self.kv_a_proj_with_mqa = nn.Linear(hidden, kv_lora_rank + rope_dim, bias=False)
        self.kv_a_layernorm = nn.Parameter(1 + 0.1 * torch.randn(kv_lora_rank))
        self.q_proj = nn.Linear(q_lora_rank, heads * (nope_dim + rope_dim), bias=False)
        self.W_UK_T = nn.Parameter(torch.randn(heads, nope_dim, kv_lora_rank) * nope_dim**-0.5)
        self.W_UV = nn.Parameter(torch.randn(heads, kv_lora_rank, v_dim) * kv_lora_rank**-0.5)
        self.o_proj = nn.Linear(heads * v_dim, hidden, bias=False)


class MLAAttention(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, kv_lora_rank: int, heads: int, nope_dim: int, rope_dim: int,
                 v_dim: int) -> None:
        super().__init__()
        self.shape = (heads, nope_dim, rope_dim, kv_lora_rank)
        self.q_a_proj = nn.Linear(hidden, q_lora_rank, bias=False)
        self.q_a_layernorm = nn.Parameter(1 + 0.1 * torch.randn(q_lora_rank))
        self.mla_attn = _Impl(hidden, q_lora_rank, kv_lora_rank, heads, nope_dim, rope_dim, v_dim)

    def _part(self, q_c, hidden, cos, sin, slots, kv_cache):
        heads, nope_dim, rope_dim, kv_lora_rank = self.shape
        impl = self.mla_attn
        kv_c, k_pe = impl.kv_a_proj_with_mqa(hidden).split([kv_lora_rank, rope_dim], dim=-1)
        kv_cache[0].index_copy_(0, slots, F.rms_norm(kv_c, (kv_lora_rank,), impl.kv_a_layernorm, eps=1e-6))
        kv_cache[1].index_copy_(0, slots, rotate(k_pe, cos, sin))
        q_nope, q_pe = impl.q_proj(q_c).view(-1, heads, nope_dim + rope_dim).split([nope_dim, rope_dim], dim=-1)
        ql_nope = torch.bmm(q_nope.transpose(0, 1), impl.W_UK_T).transpose(0, 1)
        q_pe = rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1))
        scores = torch.einsum("tnl,sl->tns", ql_nope, kv_cache[0]) + torch.einsum("tnr,sr->tns", q_pe, kv_cache[1])
        probs = (scores * (nope_dim + rope_dim) ** -0.5).softmax(dim=-1)
        out = torch.bmm(torch.einsum("tns,sl->tnl", probs, kv_cache[0]).transpose(0, 1), impl.W_UV).transpose(0, 1)
        return impl.o_proj(out.reshape(out.shape[0], -1))

    def forward(self, hidden, kv_cache, attn_metadata):
        ckq = self.q_a_proj(hidden)
        q_c = F.rms_norm(ckq, (ckq.shape[-1],), self.q_a_layernorm, eps=1e-6)
        split, slots = attn_metadata.num_decode_tokens, attn_metadata.slot_mapping
        cos, sin = attn_metadata.decode.cos, attn_metadata.decode.sin
        decode = self._part(q_c[:split], hidden[:split], cos[:split], sin[:split], slots[:split], kv_cache)
        prefill = self._part(q_c[split:], hidden[split:], cos[split:], sin[split:], slots[split:], kv_cache)
        return torch.cat([decode, prefill])
