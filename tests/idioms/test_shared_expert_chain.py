"""A shared expert in phases on its stream, as vllm-ascend's W8A8 MoE writes it, overlaps the routed experts.

- ``scale = scale.squeeze(-1)`` between two phases takes a view (no kernel): it reads nothing, so no join, and
  it runs inside the phases' one block;
- ``return self.routed(x) + out`` computes the routed experts before it reads the shared result: the routed
  call is bound to a name before the wait;
- the layer's flag and the shared expert's hold one constructor argument: one guard, so the phases pass
  their results on the stream with no join between them.

Each program runs compiled whole with the race checker and equals the undecorated model exactly.
"""

from __future__ import annotations

from idioms.harness import check_idiom

_MODEL = """
import torch
from torch import nn
from torch.nn import functional as F
from npudsl import on_stream


class Shared(nn.Module):
    def __init__(self, multistream):
        super().__init__()
        self.multistream = multistream
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(8, 8)

    @on_stream("shared", when="self.multistream")
    def act(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        gate, up = self.up(x).chunk(2, dim=-1)
        return F.silu(gate) * up, gate.abs().amax(-1, keepdim=True)

    @on_stream("shared", when="self.multistream")
    def down_side(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return self.down(x) * scale.unsqueeze(-1)


class Model(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream
        self.shared = Shared(multistream)
        self.gate = nn.Linear(8, 8)

    def routed(self, x):
        return torch.relu(self.gate(x)) * 2

    def forward(self, x):
        h = x * 2
        act, scale = self.shared.act(h); scale = scale.squeeze(-1)
        out = self.shared.down_side(act, scale)
        return self.routed(h) + out


def inputs():
    return (torch.randn(4, 8),)
"""  # noqa: E501 (a program kept as written)


def _forward(code: str) -> str:
    return code[code.index("    def forward") :].split("\n\n\n", 1)[0]


def test_the_phases_run_in_one_block_and_overlap_the_routed_experts() -> None:
    forward = _forward(check_idiom(_MODEL))
    assert forward.count('runtime.stream("shared", 0)') == 1
    assert "            scale = scale.squeeze(-1)\n" in forward  # inside the block
    assert forward.endswith(
        "        routed_1 = self.routed(h)\n"
        "        if self.shared.multistream:\n"
        '            runtime.wait("idiom.Shared.down_side.join")\n'
        "        return routed_1 + out"
    )


def test_without_multistream_it_runs_as_written() -> None:
    check_idiom(_MODEL, multistream=False)
