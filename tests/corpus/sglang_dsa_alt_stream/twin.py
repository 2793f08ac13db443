"""Single-stream twin of :mod:`corpus.sglang_dsa_alt_stream` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn

from .layers import (MLP, BumpAllocator, ForwardBatch, Indexer, KVPool, ReplicatedLinear, RMSNorm, RotaryEmbedding,
                     attn_mqa, mla_prolog)


class _Preprocess(nn.Module):
    def __init__(self, m: nn.Module) -> None:
        super().__init__()
        self.fused_qkv_a_proj_with_mqa, self.q_b_proj = m.fused_qkv_a_proj_with_mqa, m.q_b_proj
        self.q_a_layernorm, self.kv_a_layernorm, self.rotary_emb = m.q_a_layernorm, m.kv_a_layernorm, m.rotary_emb
        self.w_kc = m.w_kc
        for name in ("layer_id", "num_local_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                     "qk_rope_head_dim", "qk_head_dim"):
            setattr(self, name, getattr(m, name))


class _Attention(nn.Module):
    def __init__(self, layer_id: int, hidden: int, heads: int, q_lora_rank: int, kv_lora_rank: int, qk_nope: int,
                 qk_rope: int, v_head: int, index_heads: int, index_head_dim: int, index_topk: int,
                 max_positions: int) -> None:
        super().__init__()
        self.layer_id, self.num_local_heads = layer_id, heads
        self.q_lora_rank, self.kv_lora_rank, self.v_head_dim = q_lora_rank, kv_lora_rank, v_head
        self.qk_nope_head_dim, self.qk_rope_head_dim, self.qk_head_dim = qk_nope, qk_rope, qk_nope + qk_rope
        self.fused_qkv_a_proj_with_mqa = ReplicatedLinear(hidden, q_lora_rank + kv_lora_rank + qk_rope)
        self.q_a_layernorm = RMSNorm(q_lora_rank)
        self.kv_a_layernorm = RMSNorm(kv_lora_rank)
        self.q_b_proj = ReplicatedLinear(q_lora_rank, heads * self.qk_head_dim)
        self.w_kc = nn.Parameter(torch.randn(heads, qk_nope, kv_lora_rank) * qk_nope**-0.5)
        self.w_vc = nn.Parameter(torch.randn(heads, kv_lora_rank, v_head) * kv_lora_rank**-0.5)
        self.o_proj = ReplicatedLinear(heads * v_head, hidden)
        self.rotary_emb = RotaryEmbedding(qk_rope, max_positions)
        self.indexer = Indexer(hidden, q_lora_rank, index_heads, index_head_dim, qk_rope, index_topk, max_positions)
        self.mla_preprocess = _Preprocess(self)

    def _q_lora(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, latent = self.fused_qkv_a_proj_with_mqa(x)[0].split(
            [self.q_lora_rank, self.kv_lora_rank + self.qk_rope_head_dim], dim=-1)
        return self.q_a_layernorm(q), latent

    def _prefill(self, positions: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        q_lora, latent = self._q_lora(x)
        q = self.q_b_proj(q_lora)[0].view(-1, self.num_local_heads, self.qk_head_dim)
        k_nope, k_pe = latent.unsqueeze(1).split([self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        q_nope, q_pe = q.split([self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        q_nope_out = torch.bmm(q_nope.transpose(0, 1), self.w_kc).transpose(0, 1)
        q_pe, k_pe = self.rotary_emb(positions, q_pe, k_pe)
        return q_pe, k_pe, q_nope_out, self.kv_a_layernorm(k_nope), q_lora

    def forward(self, positions: torch.Tensor, x: torch.Tensor, batch: ForwardBatch) -> torch.Tensor:
        if batch.is_decode:
            q_pe, k_pe, q_nope_out, k_nope = mla_prolog(self.mla_preprocess, positions, x, batch)
            q_lora = self._q_lora(x)[0]
        else:
            q_pe, k_pe, q_nope_out, k_nope, q_lora = self._prefill(positions, x)
        topk = self.indexer(x, q_lora, positions, batch, self.layer_id)
        out = attn_mqa(q_nope_out, k_nope, batch, self.layer_id, q_pe, k_pe, topk)
        out = torch.bmm(out.transpose(0, 1), self.w_vc).transpose(0, 1)
        return self.o_proj(out.reshape(-1, self.num_local_heads * self.v_head_dim))[0]


class _Layer(nn.Module):
    def __init__(self, layer_id: int, hidden: int, inter: int, **attn: int) -> None:
        super().__init__()
        self.self_attn = _Attention(layer_id, hidden, **attn)
        self.input_layernorm = RMSNorm(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = MLP(hidden, inter)


class DeepseekV32Model(nn.Module):
    def __init__(self, hidden: int, inter: int, layers: int, **attn: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(_Layer(i, hidden, inter, **attn) for i in range(layers))
        self.norm = RMSNorm(hidden)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, ckv_cache: torch.Tensor, k_rope_cache: torch.Tensor,
                index_k_cache: torch.Tensor, out_cache_loc: torch.Tensor, is_decode: bool) -> torch.Tensor:
        batch = ForwardBatch(is_decode, out_cache_loc, KVPool(ckv_cache, k_rope_cache, index_k_cache))
        BumpAllocator(torch.zeros(1))
        for layer in self.layers:
            x = x + layer.self_attn(positions, layer.input_layernorm(x), batch)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return self.norm(x)
