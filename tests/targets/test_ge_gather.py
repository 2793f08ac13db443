"""GE: a gather out of a buffer by a tensor of indices is work of the caller's stream that a side call reading
its result waits for by data, as it waits for a call's result: no fork edge (``ge_gather.py``; the MLA decode's
``cos, sin = self.cos_cached[positions], ...`` before the KV cache write). An index by anything else may be a
view, which makes nothing on any stream: the edge stays, as it does where the index is not a tensor for certain
(a parameter the function rebinds to an ``int``). Each runs under the race checker, its result equal to the
portable target's.
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
        self.register_buffer("cos", torch.arange(24.0).reshape(8, 3))
        self.register_buffer("sin", torch.arange(24.0).reshape(8, 3) * 0.5)

    @on_stream("side", when="self.on")
    def use(self, h: torch.Tensor, c: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return h * c + s

    def gathered(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        c, s = self.cos[positions], self.sin[positions]
        y = self.use(h, c, s)
        z = h * 2
        return y + z

    def one_gather(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        c = self.cos[positions]
        s = self.sin[positions]
        y = self.use(h, c, s)
        z = h * 2
        return y + z

    def viewed(self, x: torch.Tensor, i: int) -> torch.Tensor:
        h = x.sin()
        c, s = self.cos[i], self.sin[i]
        y = self.use(h, c, s)
        z = h * 2
        return y + z

    def rebound(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        positions = int(positions[0])
        c, s = self.cos[positions], self.sin[positions]
        y = self.use(h, c, s)
        z = h * 2
        return y + z
"""


def _edges(body: str) -> int:
    return body.count("npu_wait_tensor") + body.count("torchair.ops.wait") + body.count("torchair.ops.record")


@pytest.mark.parametrize(("name", "edges"), [("gathered", 0), ("one_gather", 0), ("viewed", 1), ("rebound", 1)])
def test_a_gather_by_a_tensor_orders_the_call_by_data(name: str, edges: int) -> None:
    body = method_source(transform(SOURCE, "ge"), name)
    assert "npu_stream_switch" in body and min(_edges(body), 1) == edges, body


@pytest.mark.parametrize("name", ["gathered", "one_gather", "viewed", "rebound"])
def test_race_free_and_exact(name: str) -> None:
    x = torch.randn(2, 3)
    index = 3 if name == "viewed" else torch.tensor([1, 5])

    class Caller(torch.nn.Module):
        def __init__(self, module: object) -> None:
            super().__init__()
            self.m = module.M()  # type: ignore[attr-defined]

        def forward(self, x: torch.Tensor, positions: object) -> torch.Tensor:
            return getattr(self.m, name)(x, positions)

    got = run_checked(transform(SOURCE, "ge"), "ge", Caller, (x, index))
    want = run_checked(transform(SOURCE, "portable"), "portable", Caller, (x, index))
    torch.testing.assert_close(got, want)
