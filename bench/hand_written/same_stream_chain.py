"""The MLA prefill chain by hand: one fork, one block for the whole chain on "kv_stream", one join.

The three KV calls stay on one stream, so they share one block: what they pass
to each other never crosses streams. The block reads the latent cache and
``cos``/``sin`` from the main stream (one fork wait); the main stream reads them
again or allocates before it joins (the query path), so the three are kept for
``kv_stream``. ``k`` and ``v`` come back through one join before the attention.
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.same_stream_chain.weights import rotate
from npudsl import runtime

SOURCE = "corpus:same_stream_chain"
USER_EVENTS = ()
KV = "kv_stream"


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _kv(self, latent_cache: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        m = self.m
        kv_a = m.kv_a_layernorm(latent_cache[..., : m.kv_lora_rank])
        k_pe = rotate(latent_cache[..., m.kv_lora_rank :], cos, sin)
        k_nope, v = m.kv_b_proj(kv_a)[0].view(-1, m.heads, m.nope_dim + m.v_dim).split([m.nope_dim, m.v_dim], -1)
        return torch.cat([k_nope, k_pe.unsqueeze(1).expand(-1, m.heads, -1)], dim=-1), v

    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        m = self.m
        cos, sin = m.cos_cached[positions], m.sin_cached[positions]
        latent_cache = m.kv_a_proj_with_mqa(hidden_states)[0]
        runtime.record("fork")
        with runtime.stream(KV):
            runtime.wait("fork")
            for crossing in (latent_cache, cos, sin):
                runtime.record_stream(crossing, KV)
            k, v = self._kv(latent_cache, cos, sin)
            runtime.record("join")
        q = m.q_path(hidden_states, cos, sin)
        runtime.wait("join")
        return m.attend(q, k, v)
