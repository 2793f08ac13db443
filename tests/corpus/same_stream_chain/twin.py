"""Single-stream twin of :mod:`corpus.same_stream_chain` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch

from .weights import PrefillWeights, rotate


class PrefillMLA(PrefillWeights):
    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        cos, sin = self.cos_cached[positions], self.sin_cached[positions]
        latent_cache = self.kv_a_proj_with_mqa(hidden_states)[0]
        kv_a = self.kv_a_layernorm(latent_cache[..., : self.kv_lora_rank])
        k_pe = rotate(latent_cache[..., self.kv_lora_rank :], cos, sin)
        kv = self.kv_b_proj(kv_a)[0].view(-1, self.heads, self.nope_dim + self.v_dim)
        k_nope, v = kv.split([self.nope_dim, self.v_dim], dim=-1)
        k = torch.cat([k_nope, k_pe.unsqueeze(1).expand(-1, self.heads, -1)], dim=-1)
        return self.attend(self.q_path(hidden_states, cos, sin), k, v)
