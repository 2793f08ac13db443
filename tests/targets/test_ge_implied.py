"""GE: no fork edge where data or an earlier edge already orders the call (issue 26), and one where nothing does.

Three kinds of edge go: (1) a call that reads what the caller's stream made last and a result of a call on
another stream, with only planned calls switched whenever it is between them (they are no work of the caller's
stream); (2) a call that reads only results of calls on other streams (the object's state it reads unchanged by
the caller's other work: a torch.nn layer's call changes only that layer); (3) a call that reads only views of a
tensor its function was given (``for chunk in x.split(2)``). Each keeps its edge where the caller's stream did work
the call does not read: work behind the planned calls between them, a method of the object changing the state the
call reads, views of what the caller computed or of a given tensor the caller writes through another view. The
race checker told to trust only the waits the code states (``data_edges="explicit"``) shows what such an edge
orders: without it, the side stream reads a tensor the caller's stream made with nothing between.
"""

from __future__ import annotations

import pytest
import torch

from npudsl.race import StreamRaceError
from npudsl.testing.targets import run_checked
from targets_util import transform

SOURCE = """
import torch
from npudsl import on_stream


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = True
        self.proj = torch.nn.Linear(8, 8, bias=False)
        self.register_buffer("w", torch.full((8,), 2.0))

    @on_stream("a", when="self.on")
    def first(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @on_stream("b", when="self.on")
    def second(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1

    @on_stream("c", when="self.on")
    def third(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.w

    @on_stream("b", when="self.on")
    def use(self, y: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return y * c

    def bump(self) -> None:
        self.w.mul_(1)

    def passes_planned(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        a = self.first(h)
        e = self.third(x)
        b = self.use(a, h)
        return b + e

    def work_between(self, x: torch.Tensor) -> torch.Tensor:
        h = x.sin()
        a = self.first(h)
        g = x.cos()
        e = self.third(x)
        b = self.use(a, h)
        return b + e + g

    def results(self, x: torch.Tensor) -> torch.Tensor:
        a = self.first(x)
        h = x.cos()
        d = self.third(a)
        return d + h

    def results_state_changed(self, x: torch.Tensor) -> torch.Tensor:
        a = self.first(x)
        self.bump()
        d = self.third(a)
        return d

    def given_views(self, x: torch.Tensor) -> torch.Tensor:
        out = []
        for chunk in x.split(2):
            d = self.third(chunk)
            out.append(self.proj(chunk) + d)
        return torch.cat(out)

    def made_views(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 3
        out = []
        for chunk in h.split(2):
            d = self.third(chunk)
            out.append(self.proj(chunk) + d)
        return torch.cat(out)

    def written_view(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2)
        c = a.view(-1)
        c.mul_(1)
        d = self.third(b)
        return d + a

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        kept = self.work_between(x), self.results_state_changed(x), self.made_views(x), self.written_view(x)
        return (self.passes_planned(x), self.results(x), self.given_views(x), *kept)
"""

IMPLIED = ["passes_planned", "results", "given_views"]
KEPT = ["work_between", "results_state_changed", "made_views", "written_view"]


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.find("\n    def ", start + 1)]


def _edges(body: str) -> int:
    return body.count("npu_wait_tensor") + body.count("torchair.ops.wait") + body.count("torchair.ops.record")


@pytest.mark.parametrize("name", IMPLIED)
def test_no_edge_where_data_or_an_earlier_edge_orders_the_call(name: str) -> None:
    body = _method(transform(SOURCE, "ge"), name)
    assert "npu_stream_switch" in body and _edges(body) == 0, body


@pytest.mark.parametrize("name", KEPT)
def test_an_edge_where_the_callers_stream_did_work_the_call_does_not_read(name: str) -> None:
    body = _method(transform(SOURCE, "ge"), name)
    assert _edges(body) >= 1, body


def test_race_free_and_exact() -> None:
    x = torch.randn(8, 8)
    model = lambda m: (torch.manual_seed(0), m.M())[1]  # noqa: E731  # one weight for both
    got = run_checked(transform(SOURCE, "ge"), "ge", model, (x,))
    want = run_checked(transform(SOURCE, "portable"), "portable", model, (x,))
    for have, expected in zip(got, want, strict=True):
        torch.testing.assert_close(have, expected)


EDGE = """
import torch
from npudsl import on_stream


class M(torch.nn.Module):
    @on_stream("side")
    def use(self, c: torch.Tensor) -> torch.Tensor:
        return c * 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 3
        out = []
        for chunk in h.split(2):
            d = self.use(chunk)
            out.append(chunk.sin() + d)
        return torch.cat(out)
"""


def test_without_the_kept_edge_the_side_stream_reads_the_callers_tensor_unordered() -> None:
    """Views of what the caller computed: told to trust only stated waits, the checker's first race with the edge
    is the join GE orders itself (the side's result read on the main stream); without it, the side stream's read
    of the caller's tensor comes first."""
    code = transform(EDGE, "ge")
    token = "            fork_token = torchair.ops.record()\n"
    wait = "                torchair.ops.wait([fork_token])\n"
    assert token in code and wait in code
    x = torch.randn(8, 8)
    with pytest.raises(StreamRaceError, match="made on stream 'side'"):
        run_checked(code, "ge", lambda m: m.M(), (x,), data_edges="explicit")
    with pytest.raises(StreamRaceError, match="made on stream 'default'"):
        run_checked(code.replace(token, "").replace(wait, ""), "ge", lambda m: m.M(), (x,), data_edges="explicit")
