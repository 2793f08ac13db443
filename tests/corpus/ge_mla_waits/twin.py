"""Single-stream twin of :mod:`corpus.ge_mla_waits` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch

from .layers import MLAWeights, rms_norm, rotate, write_slots


class MLADecode(MLAWeights):
    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor,
                kv_cache: tuple[torch.Tensor, torch.Tensor], slots: torch.Tensor) -> torch.Tensor:
        ckq = self.q_a_proj(hidden_states)[0]
        kv = self.kv_a_proj_with_mqa(hidden_states)[0]
        cos, sin = self.cos_cached[positions], self.sin_cached[positions]
        k_nope, k_pe = kv.split([self.kv_lora_rank, self.rope_dim], dim=-1)
        nope_cache = write_slots(kv_cache[0], slots, rms_norm(k_nope, self.kv_a_layernorm_weight))
        pe_cache = write_slots(kv_cache[1], slots, rotate(k_pe, cos, sin))
        q = self.q_proj(self.q_a_layernorm(ckq))[0].view(-1, self.heads, self.nope_dim + self.rope_dim)
        q_nope, q_pe = q.split([self.nope_dim, self.rope_dim], dim=-1)
        ql_nope = torch.bmm(q_nope.transpose(0, 1), self.W_UK_T).transpose(0, 1)
        q_pe = rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1))
        scores = torch.einsum("bnl,sl->bns", ql_nope, nope_cache) + torch.einsum("bnr,sr->bns", q_pe, pe_cache)
        latent = torch.einsum("bns,sl->nbl", scores.softmax(dim=-1), nope_cache)
        return self.o_proj(torch.bmm(latent, self.W_UV).transpose(0, 1).flatten(1))[0]
