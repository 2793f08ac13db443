"""The GE stand-in records a waited-for tensor's event after the op that makes it: a gather out of a buffer
(``table[positions]``, ``operator.getitem`` in the captured graph, as tuple unpacking is) is an op of its own,
not the buffer. The stand-in used to follow the index back to the buffer and put the event before the gather ran,
so correct code raced in the checker (found by the wt30c helper on the MLA decode's ``cos``/``sin``)."""

from __future__ import annotations

import pytest
import torch

from npudsl.errors import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
import torchair


class Gather(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(24.0).reshape(8, 3))

    def forward(self, x, positions):
        y = x + 1
        c = self.table[positions]
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.scope.npu_wait_tensor(y, c)
            torchair.scope.npu_wait_tensor(y, y)
            z = y * c
        return z
"""
INPUTS = (torch.ones(2, 3), torch.tensor([1, 5]))


@pytest.mark.parametrize("data_edges", ["engine", "explicit"])
def test_a_wait_for_a_gathered_tensor_orders_the_gather(data_edges: str) -> None:
    got = run_checked(SOURCE, "ge", lambda m: m.Gather(), INPUTS, data_edges=data_edges)
    assert torch.equal(got, 2 * torch.arange(24.0).reshape(8, 3)[INPUTS[1]])


def test_without_the_wait_the_gather_races() -> None:
    unwaited = SOURCE.replace("            torchair.scope.npu_wait_tensor(y, c)\n", "")
    with pytest.raises(StreamRaceError, match="tensor 'c' made on stream 'default'"):
        run_checked(unwaited, "ge", lambda m: m.Gather(), INPUTS, data_edges="explicit")
