"""vllm-ascend's torchair MLA by hand: decode's KV work and query RoPE on "mla_secondary", prefill on the main stream.

The decode KV block (projection, norm, RoPE, cache write) reads the forward's
inputs only: as graph inputs they need no fork; made by a caller
(``bench.sync_premise``), the block waits for them (recorded as the forward
starts), and needs no ``record_stream``: the main stream reads ``hidden`` and the
caches again after the join. The query RoPE reads ``q_pe`` from the main stream: one fork; one
join before the decode attention reads the caches and ``q_pe``. The prefill part
runs on the main stream (multi-stream MLA is off there, as upstream), after the
join. ``q`` is last read by the side stream and the main stream allocates next
only after the join: no ``record_stream``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from corpus.vllm_mla.rope import rotate
from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "corpus:vllm_mla"
USER_EVENTS = ()
SIDE = "mla_secondary"


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _kv(self, hidden, cos, sin, slots, kv_cache) -> None:
        heads, nope_dim, rope_dim, kv_lora_rank = self.m.shape
        impl = self.m.mla_attn
        kv_c, k_pe = impl.kv_a_proj_with_mqa(hidden).split([kv_lora_rank, rope_dim], dim=-1)
        kv_cache[0].index_copy_(0, slots, F.rms_norm(kv_c, (kv_lora_rank,), impl.kv_a_layernorm, eps=1e-6))
        kv_cache[1].index_copy_(0, slots, rotate(k_pe, cos, sin))

    def _q(self, q_c):
        heads, nope_dim, rope_dim, _ = self.m.shape
        impl = self.m.mla_attn
        q_nope, q_pe = impl.q_proj(q_c).view(-1, heads, nope_dim + rope_dim).split([nope_dim, rope_dim], dim=-1)
        return torch.bmm(q_nope.transpose(0, 1), impl.W_UK_T).transpose(0, 1), q_pe

    def _attend(self, ql_nope, q_pe, kv_cache):
        heads, nope_dim, rope_dim, _ = self.m.shape
        impl = self.m.mla_attn
        scores = torch.einsum("tnl,sl->tns", ql_nope, kv_cache[0]) + torch.einsum("tnr,sr->tns", q_pe, kv_cache[1])
        probs = (scores * (nope_dim + rope_dim) ** -0.5).softmax(dim=-1)
        out = torch.bmm(torch.einsum("tns,sl->tnl", probs, kv_cache[0]).transpose(0, 1), impl.W_UV).transpose(0, 1)
        return impl.o_proj(out.reshape(out.shape[0], -1))

    def forward(self, hidden, kv_cache, attn_metadata):
        if from_caller():
            runtime.record("inputs")
        ckq = self.m.q_a_proj(hidden)
        q_c = F.rms_norm(ckq, (ckq.shape[-1],), self.m.q_a_layernorm, eps=1e-6)
        split, slots = attn_metadata.num_decode_tokens, attn_metadata.slot_mapping
        cos, sin = attn_metadata.decode.cos, attn_metadata.decode.sin
        with runtime.stream(SIDE):
            if from_caller():
                runtime.wait("inputs")
            self._kv(hidden[:split], cos[:split], sin[:split], slots[:split], kv_cache)
        ql_nope, q_pe = self._q(q_c[:split])
        runtime.record("fork")
        with runtime.stream(SIDE):
            runtime.wait("fork")
            q_pe = rotate(q_pe, cos[:split].unsqueeze(1), sin[:split].unsqueeze(1))
            runtime.record("join")
        runtime.wait("join")
        decode = self._attend(ql_nope, q_pe, kv_cache)
        self._kv(hidden[split:], cos[split:], sin[split:], slots[split:], kv_cache)
        ql_nope, q_pe = self._q(q_c[split:])
        q_pe = rotate(q_pe, cos[split:].unsqueeze(1), sin[split:].unsqueeze(1))
        return torch.cat([decode, self._attend(ql_nope, q_pe, kv_cache)])
