"""GE: the fork edge waits for the tensor the caller made last, and for none past a gather out of a buffer.

``cos = self.table[positions]`` is the buffer's ``getitem`` in the graph, made outside it: an edge on a tensor the
caller made before the gather (``y = torch.mm(x, x)``) would not order the call after it, nor would the call's
read of ``y`` alone. The walk back stops there, and the call waits for a token recorded after the gather.
"""

from __future__ import annotations

import torch

from npudsl.testing.targets import run_checked
from targets_util import transform, user_code

SOURCE = """
import torch
from npudsl import on_stream


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = True
        self.register_buffer("table", torch.arange(32.0).reshape(8, 4))

    @on_stream("side", when="self.on")
    def use(self, y: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return y * c

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        y = torch.mm(x, x)
        c = self.table[positions]
        z = self.use(y, c)
        return z + 1
"""


def test_no_edge_on_a_tensor_made_before_a_gather_out_of_a_buffer() -> None:
    code = user_code(transform(SOURCE, "ge"))
    assert "fork_token = torchair.ops.record()" in code
    assert "torchair.ops.wait([fork_token])" in code
    x, positions = torch.randn(4, 4), torch.tensor([1, 5, 2, 7])
    got = run_checked(transform(SOURCE, "ge"), "ge", lambda m: m.M(), (x, positions))
    assert torch.equal(got, torch.mm(x, x) * torch.arange(32.0).reshape(8, 4)[positions] + 1)
