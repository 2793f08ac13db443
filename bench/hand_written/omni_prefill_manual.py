"""omni-infer's prefill layer by hand: the user's events on three side streams, each crossing tensor kept once.

Attention: "kv_stream2" gathers the latent cache after ``latent_ready``;
"kv_stream" normalizes it, applies RoPE and writes the cache after
``latent_gathered``; the attention waits for ``kv_done``. MoE: "prefill_gather"
gathers the quantized tokens after ``quant_done``; the grouped matmuls wait for
``tokens_gathered``. The user's five events per layer are the whole ordering;
what the checker asks beyond them is a ``record_stream`` for each tensor a side
stream reads while its maker allocates again before it is known to be done.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from corpus.omni_prefill_manual.collectives import (all_gather_world, dequant, dynamic_quant, reduce_scatter_world,
                                                    rope, rotate)
from npudsl import runtime

SOURCE = "corpus:omni_prefill_manual"
USER_EVENTS = ("latent_ready", "latent_gathered", "kv_done", "quant_done", "tokens_gathered")


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _kv(self, attn: nn.Module, latent: torch.Tensor, cos, sin, kv_cache, slots):
        heads, nope_dim, rope_dim, v_dim, kv_lora_rank = attn.dims
        kv_a, k_pe = latent.split([kv_lora_rank, rope_dim], dim=-1)
        kv_a = F.rms_norm(kv_a, (kv_lora_rank,), attn.kv_a_layernorm, eps=1e-6)
        k_pe = rotate(k_pe, cos, sin)
        kv_cache[0].index_copy_(0, slots, kv_a)
        kv_cache[1].index_copy_(0, slots, k_pe)
        return kv_a, k_pe

    def _query(self, attn: nn.Module, x: torch.Tensor, cos, sin) -> torch.Tensor:
        heads, nope_dim, rope_dim, _, _ = attn.dims
        q = F.rms_norm(attn.q_a_proj(x), (attn.q_a_proj.out_features,), attn.q_a_layernorm)
        q = dequant({name: all_gather_world(t) for name, t in dynamic_quant(q).items()})
        q_nope, q_pe = attn.q_b_proj(q).view(-1, heads, nope_dim + rope_dim).split([nope_dim, rope_dim], dim=-1)
        return torch.cat([q_nope, rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1))], dim=-1)

    def _attend(self, attn: nn.Module, q, kv_a, k_pe) -> torch.Tensor:
        heads, nope_dim, _, v_dim, _ = attn.dims
        k_nope, v = attn.kv_b_proj(kv_a).view(kv_a.shape[0], heads, -1).split([nope_dim, v_dim], dim=-1)
        k = torch.cat([k_nope, k_pe.unsqueeze(1).expand(-1, heads, -1)], dim=-1)
        probs = (torch.einsum("qnd,knd->nqk", q, k) * q.shape[-1] ** -0.5).softmax(dim=-1)
        return reduce_scatter_world(attn.o_proj(torch.einsum("nqk,knd->qnd", probs, v).reshape(kv_a.shape[0], -1)))

    def _attention(self, attn: nn.Module, x, cos, sin, kv_cache, slots) -> torch.Tensor:
        x = dequant(dynamic_quant(x))
        latent = attn.kv_a_proj_with_mqa(x)
        runtime.record("latent_ready")
        with runtime.stream("kv_stream2"):
            runtime.wait("latent_ready")
            runtime.record_stream(latent, "kv_stream2")
            gathered = all_gather_world(latent)
            runtime.record("latent_gathered")
        q = self._query(attn, x, cos, sin)
        with runtime.stream("kv_stream"):
            runtime.wait("latent_gathered")
            kv_a, k_pe = self._kv(attn, gathered, cos, sin, kv_cache, slots)
            runtime.record("kv_done")
        runtime.wait("kv_done")
        return self._attend(attn, q, kv_a, k_pe)

    def _moe(self, moe: nn.Module, x: torch.Tensor) -> torch.Tensor:
        quant = dynamic_quant(x)
        runtime.record("quant_done")
        with runtime.stream("prefill_gather"):
            runtime.wait("quant_done")
            runtime.record_stream(quant, "prefill_gather")  # both tensors of the dict
            rows = {name: all_gather_world(t) for name, t in quant.items()}
            runtime.record("tokens_gathered")
        gate, up = moe.shared_gate_up(dequant(quant)).chunk(2, dim=-1)
        shared = moe.shared_down(F.silu(gate) * up)
        weights, ids = moe.gate(x).softmax(dim=-1).topk(moe.top_k, dim=-1)
        weights, ids = all_gather_world(torch.cat([weights, ids.float()], dim=-1)).split(moe.top_k, dim=-1)
        mask = weights.new_zeros(weights.shape[0], moe.w13.shape[0]).scatter(-1, ids.long(), weights)
        runtime.wait("tokens_gathered")
        outputs = []
        for start in range(0, mask.shape[0], 3):
            chunk = dequant({name: t[start : start + 3] for name, t in rows.items()})
            gate, up = torch.einsum("th,ehi->eti", chunk, moe.w13).chunk(2, dim=-1)
            outputs.append(torch.einsum("eti,eih,te->th", F.silu(gate) * up, moe.w2, mask[start : start + 3]))
        return reduce_scatter_world(torch.cat(outputs)) + shared

    def forward(self, x, positions, kv_caches, slots):
        cos, sin = rope(positions, self.m.rope_dim)
        for layer, kv_cache in zip(self.m.layers, kv_caches):
            x = x + self._attention(layer.self_attn, layer.input_layernorm(x), cos, sin, kv_cache, slots)
            x = x + self._moe(layer.mlp, layer.post_attention_layernorm(x))
        return x
