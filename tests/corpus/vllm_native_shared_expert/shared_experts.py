"""The shared expert on its own stream, each phase waiting for a point of the routed path.

Shaped after ``AscendSharedExperts.forward`` in vllm-ascend
``vllm_ascend/ops/fused_moe/shared_experts.py`` (native streams, ``sync`` by hand):
on the shared-experts stream, the gate/up projection (``part1``) waits for
``before_dispatch`` and overlaps the token dispatch; the activation waits for
``before_gmm2`` and overlaps the second grouped matmul; the down projection with
the sigmoid expert gate (Qwen3-Next's ``expert_gate``, end of ``part2``) waits for
``before_combine`` and overlaps the combine; then the main stream waits for the
shared stream (upstream ``wait_stream``; here the shared event ``moe:shared_done``,
waited for in ``moe_layer.py``). The events are recorded by ``RoutedExperts`` in
``routed_experts.py``, another class in another file: shared events
(CONTRACT section 1). Every phase reads only the layer input and the previous
phase's result, both ready for the shared stream.

Idioms: phased_shared (three side-stream phases around dispatch, gmm2 and combine),
manual_pipeline (``sync="manual"``, events from another class), module_constants
(the stream tag), container_returns (a tuple through the phases).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import after, keep_output, on_stream, records

SHARED_EXPERTS_STREAM = "shared_experts_calculation"


class SharedExperts(nn.Module):
    def __init__(self, hidden: int, inter: int, multistream: bool = True) -> None:
        super().__init__()
        self.multistream_overlap = multistream
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)
        self.expert_gate = nn.Linear(hidden, 1, bias=False)

    @on_stream(SHARED_EXPERTS_STREAM, sync="manual", when="self.multistream_overlap")
    @after("moe:before_dispatch")
    def part1(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.gate_up_proj(hidden_states)

    @on_stream(SHARED_EXPERTS_STREAM, sync="manual", when="self.multistream_overlap")
    @after("moe:before_gmm2")
    def act(self, gate_up: torch.Tensor) -> torch.Tensor:
        gate, up = gate_up.chunk(2, dim=-1)
        return F.silu(gate) * up

    @on_stream(SHARED_EXPERTS_STREAM, sync="manual", when="self.multistream_overlap")
    @after("moe:before_combine")
    @records("moe:shared_done")
    @keep_output
    def part2(self, hidden_states: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.expert_gate(hidden_states)) * self.down_proj(act)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.part2(hidden_states, self.act(self.part1(hidden_states)))
