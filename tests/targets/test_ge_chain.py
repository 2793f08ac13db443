"""GE: a view between two calls of a chain on one stream (``scale = scale.squeeze(-1)``) runs in their block, so
the chain keeps its one fork; anything that runs an op between them ends the chain (a fork edge again)."""

from __future__ import annotations

import torch
from method_source import method_source

from npudsl.testing.targets import run_checked
from targets_util import transform

CHAIN = """
import torch
from npudsl import on_stream


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = True

    @on_stream("side", when="self.on")
    def act(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x * 2, x.abs().amax(-1, keepdim=True)

    @on_stream("side", when="self.on")
    def down(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return x * scale.unsqueeze(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + 1
        a, scale = self.act(h)
        scale = scale.squeeze(-1)
        out = self.down(a, scale)
        return h * 3 + out

    def op_between(self, x: torch.Tensor) -> torch.Tensor:
        h = x + 1
        a, scale = self.act(h)
        scale = scale * 2
        out = self.down(a, scale)
        return h * 3 + out
"""


def test_a_view_between_two_calls_runs_in_their_block() -> None:
    forward = method_source(transform(CHAIN, "ge"), "forward")
    assert forward.count("npu_stream_switch") == 1
    assert "            scale = scale.squeeze(-1)\n" in forward


def test_an_op_between_them_ends_the_chain() -> None:
    assert method_source(transform(CHAIN, "ge"), "op_between").count("npu_stream_switch") == 2


def test_the_chain_is_race_free_and_exact() -> None:
    x = torch.randn(4, 8)
    h = x + 1
    want = h * 3 + (h * 2) * h.abs().amax(-1, keepdim=True)
    got = run_checked(transform(CHAIN, "ge"), "ge", lambda m: m.M(), (x,))
    torch.testing.assert_close(got, want)
