"""omni-infer's decode MoE with config-switched streams by hand: four blocks on three side streams, an event per point.

The top-k travels "22" (gate) -> "23" (gather) -> "22" (split) -> main, each hop
one event; the gate reads the per-token scale made on the main stream (one more).
The shared expert on "21" reads only the input: as a graph input, no fork, one
join, and no tensor is dropped by a stream that allocates again before the reader
is known to be done: no ``record_stream``. When a caller makes the input
(``bench.sync_premise``), "21" waits for it (the gate's event, already recorded
where the block is issued) and keeps it alive: its last reader is "21", and the
main stream allocates before it waits for ``shared_done``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from bench.hand_written._experts import dense_experts
from corpus.omni_config_streams.moe import dynamic_quant
from corpus.omni_config_streams.ops import all_gather_two_stage
from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "corpus:omni_config_streams"
USER_EVENTS = ()


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.m
        x_int8, pertoken_scale = dynamic_quant(x)
        global_x = all_gather_two_stage(x_int8)
        runtime.record("scale_ready")
        with runtime.stream("22"):
            runtime.wait("scale_ready")
            weights, ids = m.gate(x).softmax(dim=-1).topk(m.top_k, dim=-1)
            topk_cat = torch.cat((weights, ids.float(), pertoken_scale.unsqueeze(-1)), dim=-1)
            runtime.record("cat_done")
        with runtime.stream("21"):
            if from_caller():
                runtime.wait("scale_ready")
                runtime.record_stream(x, "21")
            gate, up = m.shared_gate_up(x).chunk(2, dim=-1)
            shared = m.shared_down(F.silu(gate) * up)
            runtime.record("shared_done")
        with runtime.stream("23"):
            runtime.wait("cat_done")
            topk_all = all_gather_two_stage(topk_cat)
            runtime.record("all_done")
        with runtime.stream("22"):
            runtime.wait("all_done")
            weights, ids, scale = topk_all.split([m.top_k, m.top_k, 1], dim=-1)
            ids, scale = torch.round(ids).long(), scale.squeeze(-1)
            runtime.record("split_done")
        runtime.wait("split_done")
        routed = dense_experts(global_x * scale.unsqueeze(-1), m.w13, m.w2, weights, ids)
        half = routed.shape[0] // 2
        runtime.wait("shared_done")
        return routed[:half] + routed[half:].roll(-1, dims=0) + shared
