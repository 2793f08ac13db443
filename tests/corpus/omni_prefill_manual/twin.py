"""Single-stream twin of :mod:`corpus.omni_prefill_manual` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .collectives import all_gather_world, dequant, dynamic_quant, reduce_scatter_world, rope, rotate


def _linear(n_in: int, n_out: int) -> nn.Linear:
    return nn.Linear(n_in, n_out, bias=False)


class _Attn(nn.Module):
    def __init__(self, hidden, q_lora_rank, kv_lora_rank, heads, nope_dim, rope_dim, v_dim) -> None:
        super().__init__()
        self.dims = (heads, nope_dim, rope_dim, v_dim, kv_lora_rank)
        self.kv_a_proj_with_mqa = _linear(hidden, kv_lora_rank + rope_dim)
        self.kv_a_layernorm = nn.Parameter(1 + 0.1 * torch.randn(kv_lora_rank))
        self.q_a_proj = _linear(hidden, q_lora_rank)
        self.q_a_layernorm = nn.Parameter(1 + 0.1 * torch.randn(q_lora_rank))
        self.q_b_proj = _linear(q_lora_rank, heads * (nope_dim + rope_dim))
        self.kv_b_proj = _linear(kv_lora_rank, heads * (nope_dim + v_dim))
        self.o_proj = _linear(heads * v_dim, hidden)

    def forward(self, x, cos, sin, kv_cache, slots):
        heads, nope_dim, rope_dim, v_dim, kv_lora_rank = self.dims
        x = dequant(dynamic_quant(x))
        kv_a, k_pe = all_gather_world(self.kv_a_proj_with_mqa(x)).split([kv_lora_rank, rope_dim], dim=-1)
        kv_a = F.rms_norm(kv_a, (kv_lora_rank,), self.kv_a_layernorm, eps=1e-6)
        k_pe = rotate(k_pe, cos, sin)
        kv_cache[0].index_copy_(0, slots, kv_a)
        kv_cache[1].index_copy_(0, slots, k_pe)
        q = F.rms_norm(self.q_a_proj(x), (self.q_a_proj.out_features,), self.q_a_layernorm)
        q = dequant({name: all_gather_world(t) for name, t in dynamic_quant(q).items()})
        q_nope, q_pe = self.q_b_proj(q).view(-1, heads, nope_dim + rope_dim).split([nope_dim, rope_dim], dim=-1)
        q = torch.cat([q_nope, rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1))], dim=-1)
        k_nope, v = self.kv_b_proj(kv_a).view(kv_a.shape[0], heads, -1).split([nope_dim, v_dim], dim=-1)
        k = torch.cat([k_nope, k_pe.unsqueeze(1).expand(-1, heads, -1)], dim=-1)
        probs = (torch.einsum("qnd,knd->nqk", q, k) * q.shape[-1] ** -0.5).softmax(dim=-1)
        return reduce_scatter_world(self.o_proj(torch.einsum("nqk,knd->qnd", probs, v).reshape(kv_a.shape[0], -1)))


class _Moe(nn.Module):
    def __init__(self, hidden, inter, experts, top_k) -> None:
        super().__init__()
        self.top_k = top_k
        self.gate = _linear(hidden, experts)
        self.shared_gate_up = _linear(hidden, 2 * inter)
        self.shared_down = _linear(inter, hidden)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, x):
        quant = dynamic_quant(x)
        gate, up = self.shared_gate_up(dequant(quant)).chunk(2, dim=-1)
        shared = self.shared_down(F.silu(gate) * up)
        weights, ids = self.gate(x).softmax(dim=-1).topk(self.top_k, dim=-1)
        weights, ids = all_gather_world(torch.cat([weights, ids.float()], dim=-1)).split(self.top_k, dim=-1)
        mask = weights.new_zeros(weights.shape[0], self.w13.shape[0]).scatter(-1, ids.long(), weights)
        rows = {name: all_gather_world(t) for name, t in quant.items()}
        outputs = []
        for start in range(0, mask.shape[0], 3):
            chunk = dequant({name: t[start : start + 3] for name, t in rows.items()})
            gate, up = torch.einsum("th,ehi->eti", chunk, self.w13).chunk(2, dim=-1)
            outputs.append(torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask[start : start + 3]))
        return reduce_scatter_world(torch.cat(outputs)) + shared


class _Layer(nn.Module):
    def __init__(self, hidden, q_lora_rank, kv_lora_rank, heads, nope_dim, rope_dim, v_dim, inter, experts,
                 top_k) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.self_attn = _Attn(hidden, q_lora_rank, kv_lora_rank, heads, nope_dim, rope_dim, v_dim)
        self.post_attention_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.mlp = _Moe(hidden, inter, experts, top_k)


class PrefillModel(nn.Module):
    def __init__(self, layers: int = 2, **shape) -> None:
        super().__init__()
        self.rope_dim = shape["rope_dim"]
        self.layers = nn.ModuleList(_Layer(**shape) for _ in range(layers))

    def forward(self, x, positions, kv_caches, slots):
        cos, sin = rope(positions, self.rope_dim)
        for layer, kv_cache in zip(self.layers, kv_caches):
            x = x + layer.self_attn(layer.input_layernorm(x), cos, sin, kv_cache, slots)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return x
