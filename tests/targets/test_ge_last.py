"""GE: the fork edge waits for the tensor the caller made last, and for none past a gather out of a buffer.

``c = self.table[positions]`` is an index op of the graph torchair converts, whose value is no certain tensor here
(a buffer's type is not read): an edge on a tensor the caller made before it (``y = torch.mm(x, x)``) would not
order the call after the gather. A call that reads ``c`` waits for it by data, so after all the caller's work
(``ge_gather.py``): no edge. One that does not read it waits for a token recorded after the gather, not for ``y``.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from npudsl.testing.targets import run_checked
from targets_util import transform

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

    def reads_it(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        y = torch.mm(x, x)
        c = self.table[positions]
        z = self.use(y, c)
        return z + 1

    def does_not(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        y = torch.mm(x, x)
        c = self.table[positions]
        z = self.use(y, y)
        return z + c
"""


def test_a_call_reading_the_gather_needs_no_edge() -> None:
    body = method_source(transform(SOURCE, "ge"), "reads_it")
    assert "npu_stream_switch" in body and "torchair.ops" not in body and "npu_wait_tensor" not in body


def test_no_edge_on_a_tensor_made_before_a_gather_out_of_a_buffer() -> None:
    body = method_source(transform(SOURCE, "ge"), "does_not")
    assert "fork_token = torchair.ops.record()" in body
    assert "torchair.ops.wait([fork_token])" in body


@pytest.mark.parametrize("name", ["reads_it", "does_not"])
def test_race_free_and_exact(name: str) -> None:
    x, positions = torch.randn(4, 4), torch.tensor([1, 5, 2, 7])

    class Caller(torch.nn.Module):
        def __init__(self, module: object) -> None:
            super().__init__()
            self.m = module.M()  # type: ignore[attr-defined]

        def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
            return getattr(self.m, name)(x, positions)

    got = run_checked(transform(SOURCE, "ge"), "ge", Caller, (x, positions))
    y, c = torch.mm(x, x), torch.arange(32.0).reshape(8, 4)[positions]
    torch.testing.assert_close(got, y * c + 1 if name == "reads_it" else y * y + c)
