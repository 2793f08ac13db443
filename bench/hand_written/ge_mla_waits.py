"""The torchair MLA decode by hand: two blocks on "mla_secondary", each starting where a value crosses.

The first block (KV projection, norm, RoPE, cache write) reads ``cos``/``sin``
gathered on the main stream: it waits for them. It records the user's
``kv_projected`` after the projection, which the query projection waits for. The
second block (the query's RoPE) reads ``q_pe`` from the main stream: one more
wait. One join, before the attention reads the caches and ``q_pe``. No
``record_stream``: ``cos``, ``sin`` and ``q`` are last read in the second block,
and the main stream allocates next only after it waits for the join. When a
caller makes the inputs (``bench.sync_premise``), ``rope_ready`` orders them too,
and ``slots`` is last read on the side stream (the cache writes) while the main
stream allocates before the join: it is kept for it (``hidden_states`` is last
read before ``kv_projected``, which the main stream waits for first).
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.ge_mla_waits.layers import rms_norm, rotate
from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "corpus:ge_mla_waits"
USER_EVENTS = ("kv_projected",)
SIDE = "mla_secondary"


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _kv(self, hidden_states, cos, sin, kv_cache, slots):
        m = self.m
        kv = m.kv_a_proj_with_mqa(hidden_states)[0]
        runtime.record("kv_projected")
        k_nope, k_pe = kv.split([m.kv_lora_rank, m.rope_dim], dim=-1)
        kv_cache[0].index_copy_(0, slots, rms_norm(k_nope, m.kv_a_layernorm_weight))
        kv_cache[1].index_copy_(0, slots, rotate(k_pe, cos, sin))

    def _attend(self, ql_nope, q_pe, nope_cache, pe_cache):
        m = self.m
        scores = torch.einsum("bnl,sl->bns", ql_nope, nope_cache) + torch.einsum("bnr,sr->bns", q_pe, pe_cache)
        latent = torch.einsum("bns,sl->nbl", scores.softmax(dim=-1), nope_cache)
        return m.o_proj(torch.bmm(latent, m.W_UV).transpose(0, 1).flatten(1))[0]

    def forward(self, hidden_states, positions, kv_cache, slots):
        m = self.m
        ckq = m.q_a_proj(hidden_states)[0]
        cos, sin = m.cos_cached[positions], m.sin_cached[positions]
        runtime.record("rope_ready")
        with runtime.stream(SIDE):
            runtime.wait("rope_ready")
            if from_caller():
                runtime.record_stream(slots, SIDE)
            self._kv(hidden_states, cos, sin, kv_cache, slots)
        runtime.wait("kv_projected")
        q_nope, q_pe = m.q_proj(m.q_a_layernorm(ckq))[0].view(-1, m.heads, m.nope_dim + m.rope_dim).split(
            [m.nope_dim, m.rope_dim], dim=-1)
        ql_nope = torch.bmm(q_nope.transpose(0, 1), m.W_UK_T).transpose(0, 1)
        runtime.record("q_ready")
        with runtime.stream(SIDE):
            runtime.wait("q_ready")
            q_pe = rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1))
            runtime.record("mla_join")
        runtime.wait("mla_join")
        return self._attend(ql_nope, q_pe, kv_cache[0], kv_cache[1])
