"""The GE stand-in follows a view that GE compiles to no kernel to what made the viewed tensor, as GE does.

torchair turns ``x.view(-1)`` into a ``Reshape`` node (``x.unsqueeze(0)``: ``Unsqueeze``, ``x.detach()``:
``Identity``...) and GE deletes it, handing its control edges to the node that made ``x``
(``npudsl/testing/standins/_ge_views.py`` has the sources). So hand-written GE code that waits for such a view, or
takes ``torchair.ops.record()`` right after one, orders after whatever made the viewed tensor, not after the work
the side stream issued before the view. The stand-in used to issue the view as an op where it stood, and passed
that code: every case of ``BAD`` passed the checker on main. A view that is a kernel in GE (``transpose``, a slice)
and a view of what the side stream made still order where they stand (``GOOD``).
"""

from __future__ import annotations

import pytest
import torch

from npudsl.errors import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph

SOURCE = """\
import torch
import torchair


class Views(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(4, 4))

    def forward(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            self.buf.mul_(2)
            out = VIEW
            TOKEN
        torchair.ops.wait([WAITED])
        return out.reshape(4, 4) + self.buf
"""
RECORD = ("tok = torchair.ops.record()", "tok")
OUT = ("pass", "out")
BAD = {
    "wait-view": ("x.view(-1)", *OUT),
    "wait-reshape": ("x.reshape(16)", *OUT),
    "wait-unsqueeze": ("x.unsqueeze(0)", *OUT),
    "wait-none-index": ("x[None]", *OUT),
    "wait-detach": ("x.detach()", *OUT),
    "wait-flatten": ("x.flatten()", *OUT),
    "wait-view-of-view": ("x.view(-1).view(2, 8)", *OUT),
    "record-after-view": ("x.view(-1)", *RECORD),
    "record-after-squeeze": ("x.unsqueeze(0).squeeze(0)", *RECORD),
}
GOOD = {
    "wait-transpose": ("x.t()", *OUT),
    "wait-slice": ("x[0:4]", *OUT),
    "wait-view-of-made": ("(x + 1).view(-1)", *OUT),
    "record-after-transpose": ("x.t()", *RECORD),
    "record-after-made-view": ("(x + 1).view(-1)", *RECORD),
}


def _source(view: str, token: str, waited: str) -> str:
    return SOURCE.replace("VIEW", view).replace("TOKEN", token).replace("WAITED", waited)


def _run(source: str, x: torch.Tensor) -> torch.Tensor:
    return run_checked(source, "ge", lambda m: m.Views(), (x,), data_edges="explicit")


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_an_order_on_a_view_of_no_kernel_lands_on_the_viewed_tensor(case: tuple[str, str, str]) -> None:
    with pytest.raises(StreamRaceError, match="'self.buf' written in place on stream 'side'"):
        _run(_source(*case), torch.randn(4, 4))  # on main: no race found


@pytest.mark.parametrize("case", GOOD.values(), ids=GOOD.keys())
def test_a_kernel_view_or_a_view_of_the_sides_work_orders_where_it_stands(case: tuple[str, str, str]) -> None:
    x = torch.randn(4, 4)
    made = {"x.t()": x.t(), "x[0:4]": x, "(x + 1).view(-1)": x + 1}[case[0]]
    torch.testing.assert_close(_run(_source(*case), x), made.reshape(4, 4) + 2)


def test_the_token_of_record_is_a_view_in_the_graph_torchair_compiles() -> None:
    """The premise, on the graph aot_autograd makes: the op right before ``record`` is the ``view`` (a ``Reshape``
    once converted; torchair's token is the stream's last op)."""
    trace = trace_graph(_source("x.view(-1)", *RECORD), "ge", lambda m: m.Views(), (torch.randn(4, 4),))
    nodes = [n for n in trace.aot[0].graph.nodes if n.op == "call_function"]
    (record,) = (i for i, n in enumerate(nodes) if "standin_air.record" in str(n.target))
    assert nodes[record - 1].target is torch.ops.aten.view.default


FORK = """\
import torch
import torchair


class Fork(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(4, 4))

    def forward(self, x):
        h = x + 1
        self.buf.add_(h)
        c = DEPENDENCY
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.scope.npu_wait_tensor(self.buf, c)
            out = self.buf * 2
        torchair.ops.wait([out])
        return out + h
"""


def test_a_fork_edge_on_a_view_orders_after_what_made_the_viewed_tensor() -> None:
    """``npu_wait_tensor(self.buf, c)`` with ``c = h.view(-1)``: the edge lands on ``h``'s producer, before the
    caller's ``self.buf.add_(h)`` that the side stream then reads (on main: no race found)."""
    with pytest.raises(StreamRaceError, match="'self.buf' written in place on stream 'default'"):
        run_checked(
            FORK.replace("DEPENDENCY", "h.view(-1)"),
            "ge",
            lambda m: m.Fork(),
            (torch.randn(4, 4),),
            data_edges="explicit",
        )


def test_a_fork_edge_on_a_kernel_orders_where_it_stands() -> None:
    x = torch.randn(4, 4)
    source = FORK.replace("DEPENDENCY", "self.buf.sum()")
    got = run_checked(source, "ge", lambda m: m.Fork(), (x,), data_edges="explicit")
    torch.testing.assert_close(got, (x + 2) * 2 + x + 1)


TWICE = """\
import torch
import torchair


class Twice(torch.nn.Module):
    def forward(self, x, cache):
        with torchair.scope.npu_stream_switch("side", 0):
            cache.add_(x)
        torchair.ops.wait([cache])
        y = cache * 2
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.ops.wait([y])
            cache.mul_(3)
        torchair.ops.wait([cache])
        return cache + y
"""


def test_a_second_wait_for_a_tensor_orders_after_its_later_write() -> None:
    """The stand-in kept ``record()`` tokens and producers in one table, so a second ``wait([cache])`` found the
    graph input's event there and skipped ``cache.mul_(3)`` written since: a race reported in good code on main."""
    x, cache = torch.arange(3.0), torch.ones(3)
    got = run_checked(TWICE, "ge", lambda m: m.Twice(), (x, cache.clone()), data_edges="explicit")
    torch.testing.assert_close(got, (cache + x) * 3 + (cache + x) * 2)
