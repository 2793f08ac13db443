"""GE: no fork edge where the caller's earlier work orders nothing the call needs, or already comes first (issue 26).

A call that reads only what its function was given (its parameters, its object's state: a staging of the next
layer's weights in the layer loop; a module's stream function called by its bare name, which is no data); a call
that reads only what earlier calls on its own stream made; a call whose only earlier work is a test that compares
(``if n < 0: return ...``, ``if n > 0:``); a call whose input, on every path back, is what the caller's last work
made (``u = None``, ``if self.on: u = self.up(x)``, ``if u is None: u = torch.cos(x)``). An edge stays where the
caller did work the call does not read, or read only part of (one name of ``a, b =``), and the call reads what the
function made, or state its object's other methods may change.
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


@on_stream("side")
def lowered(x: torch.Tensor) -> torch.Tensor:
    return x - 1


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = True
        self.ws = torch.nn.ParameterList([torch.nn.Parameter(torch.full((8,), k + 1.0)) for k in range(3)])

    @on_stream("side", when="self.on")
    def up(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @on_stream("side", when="self.on")
    def down(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1

    @on_stream("side", when="self.on")
    def scaled(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.ws[0]

    def bump(self) -> None:
        self.ws[0].mul_(1)

    def state_changed(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        self.bump()
        d = self.scaled(x)
        return d + h

    def own_stream(self, x: torch.Tensor) -> torch.Tensor:
        u = self.up(x)
        h = x.sin()
        d = self.down(u)
        return d + h

    def quiet_tests(self, x: torch.Tensor, n: int) -> torch.Tensor:
        if n < 0:
            return x.new_zeros(x.shape)
        if n > 0 and self.on:
            u = self.up(x)
            return u + 1
        return x

    def every_path(self, x: torch.Tensor) -> torch.Tensor:
        u = None
        if self.on:
            u = self.up(x)
        if u is None:
            u = torch.cos(x)
        d = self.down(u)
        return d

    def not_read(self, x: torch.Tensor) -> torch.Tensor:
        g = x * 3
        h = x.sin()
        d = self.down(g)
        return d + h

    def given(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        d = self.down(x)
        return d + h

    def given_to_function(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        d = lowered(x)
        return d + h

    def made_for_function(self, x: torch.Tensor) -> torch.Tensor:
        g = x * 3
        h = x.sin()
        d = lowered(g)
        return d + h

    def staged(self, x: torch.Tensor) -> torch.Tensor:
        for i, _ in enumerate(self.ws):
            following = self.ws[i + 1] if i + 1 < len(self.ws) else None
            if following is not None:
                w = self.down(following)
                x = x * w
            x = x.sin()
        return x

    def half_read(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.sin().chunk(2)  # views of what the function made: x.chunk(2) would be given
        d = self.down(a)
        return d + b

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        shared = self.own_stream(x), self.quiet_tests(x, 1), self.every_path(x), self.not_read(x), self.half_read(x)
        functions = self.given_to_function(x), self.made_for_function(x)
        return (*shared, self.given(x), self.staged(x), *functions)
"""


def _edges(body: str) -> int:
    return body.count("npu_wait_tensor") + body.count("torchair.ops.wait") + body.count("torchair.ops.record")


@pytest.mark.parametrize("name", ["own_stream", "quiet_tests", "every_path", "given", "staged", "given_to_function"])
def test_no_edge_where_earlier_work_already_comes_first(name: str) -> None:
    body = method_source(transform(SOURCE, "ge"), name)
    assert "npu_stream_switch" in body and _edges(body) == 0, body


def test_an_edge_where_the_call_does_not_read_all_of_the_last_work() -> None:
    code = transform(SOURCE, "ge")
    assert "torchair.scope.npu_wait_tensor(g, h)" in method_source(code, "not_read")
    assert "torchair.scope.npu_wait_tensor(a, b)" in method_source(code, "half_read")
    assert "torchair.scope.npu_wait_tensor(g, h)" in method_source(code, "made_for_function")
    # a method of the object ran before: it may change its state
    assert _edges(method_source(code, "state_changed")) == 1


def test_race_free_and_exact() -> None:
    x = torch.randn(4, 8)
    a, b = x.sin().chunk(2)
    staged = x
    for k in range(3):
        staged = (staged * (k + 3.0) if k < 2 else staged).sin()
    want = (x * 2 + 1 + x.sin(), x * 2 + 1, x * 2 + 1, x * 3 + 1 + x.sin(), a + 1 + b, x + 1 + x.sin(), staged)
    want += (x - 1 + x.sin(), x * 3 - 1 + x.sin())
    got = run_checked(transform(SOURCE, "ge"), "ge", lambda m: m.M(), (x,))
    for have, expected in zip(got, want, strict=True):
        torch.testing.assert_close(have, expected)
