"""The DeepSeek-V3.2 indexer by hand: two side streams, one event per point.

As graph inputs, what the side branches read is ready everywhere: neither waits
before it starts. ``q_scale`` crosses from "22" to "33" and ``q`` from "22" to the
main stream: one event, ``q_done``, recorded once and waited for by both. The head
weights come back to the main stream through ``w_done``. Nothing is allocated on a
side stream after its results are read: no ``record_stream`` of them. When a caller
makes the inputs (``bench.sync_premise``), "22" waits for them (one event, recorded
as the forward starts; "33" follows through ``q_done``) and keeps alive what it
reads (``qr``, the scale, ``cos``, ``sin``), as "33" keeps ``x``: the main stream
drops each before it waits for the side stream that read it, and allocates between.
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.cann_v32_indexer.indexer import quantize, rotate
from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "corpus:cann_v32_indexer"
USER_EVENTS = ()


def _rope_then_quant(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rope: int) -> tuple[torch.Tensor, ...]:
    pe, nope = x.split([rope, x.shape[-1] - rope], dim=-1)
    return quantize(torch.cat([rotate(pe, cos, sin), nope], dim=-1))


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def forward(self, x, qr, cos_sin, key_cache, key_scale_cache, slot_mapping, is_prefill, c8_input_dict):
        m = self.m
        heads, head_dim, rope, topk = m.dims
        cos, sin = cos_sin
        if from_caller():
            runtime.record("inputs")
        with runtime.stream("22"):
            if from_caller():
                runtime.wait("inputs")
                for made in (qr, c8_input_dict["pertoken_scale"], cos, sin):
                    runtime.record_stream(made, "22")
            q_b = m.wq_b(qr) * c8_input_dict["pertoken_scale"]
            q, q_scale = _rope_then_quant(q_b.view(-1, heads, head_dim), cos.unsqueeze(1), sin.unsqueeze(1), rope)
            runtime.record("q_done")
        with runtime.stream("33"):
            runtime.wait("q_done")
            if from_caller():
                runtime.record_stream(x, "33")
            weights = (m.weights_proj(x) * heads**-0.5).unsqueeze(-1) * q_scale * head_dim**-0.5
            runtime.record("w_done")
        k, k_scale = _rope_then_quant(m.k_norm(m.wk(x)), cos, sin, rope)
        key_cache.index_copy_(0, slot_mapping, k)
        key_scale_cache.index_copy_(0, slot_mapping, k_scale)
        runtime.wait("q_done")
        scores = torch.einsum("tnd,sd->tns", q, key_cache) * key_scale_cache.squeeze(-1)
        runtime.wait("w_done")
        return (scores.relu() * weights).sum(dim=1).topk(topk, dim=-1)
