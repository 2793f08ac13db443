"""A change the caller makes to an object a pending call was given, through an item or a local, waits for the call.

``self.dispatch(self.ds[i])`` reads ``d.buf`` on "comm"; the caller then fills an object of that list
(``self.ds[j].prepare(h)``, ``self.ds[j].buf.copy_(h)``), or changes the object it gave whole (``self.d.prepare(h)``,
or through a local holding it: ``d = self.d; d.prepare(h)``). The state a statement writes was named by attribute
chains only, so an item's method or an object's attribute below the chain the call read was no write, and the caller
overwrote the buffer the side stream still read (each case fails on main with the checker's ``StreamRaceError``):
``codegen/lower/flow/item_state_writes.py`` and ``crossing_writes.state_written``. A distinct list through a local
(``ds = self.ds``) whose callee also reads an item through its object (``self.ds[1].buf``) waits too: the item the
loop fills is apart from what the earlier call was given, not from what its body reaches.
"""

from __future__ import annotations

import types

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Dispatcher:
    def __init__(self, width: int) -> None:
        self.buf = torch.zeros(2, width)

    def prepare(self, h):
        self.buf.copy_(h)


class Model(nn.Module):
    def __init__(self, width: int = 3) -> None:
        super().__init__()
        self.d = Dispatcher(width)
        self.ds = BUILD

    @on_stream("comm")
    def dispatch(self, d: Dispatcher):
        return READ

    def forward(self, hs: list[torch.Tensor]):
        n = len(hs)
        out: list[torch.Tensor | None] = [None] * n
        ys: list[torch.Tensor | None] = [None] * n
        ds = self.ds
        for i in range(n):
            h = hs[i] + 1
            BODY
        for i in range(n):
            ys[i] = out[i] * 3
        return torch.cat(ys)
"""
ONE = "[Dispatcher(width)] * 2"  # one object twice
DISTINCT = "[Dispatcher(width) for _ in range(2)]"
CASES = {
    "item_method": (ONE, "d.buf * 2", "self.ds[i].prepare(h)\n            out[i] = self.dispatch(self.ds[i])"),
    "item_tensor": (ONE, "d.buf * 2", "self.ds[i].buf.copy_(h)\n            out[i] = self.dispatch(self.ds[i])"),
    "whole_object": (ONE, "d.buf * 2", "self.d.prepare(h)\n            out[i] = self.dispatch(self.d)"),
    "held_local": (ONE, "d.buf * 2", "o = self.d\n            o.prepare(h)\n            out[i] = self.dispatch(o)"),
    "body_reaches_item": (
        DISTINCT,
        "d.buf * 2 + self.ds[1].buf",
        "ds[i].prepare(h)\n            out[i] = self.dispatch(ds[i])",
    ),
}


def _source(case: str) -> str:
    build, read, body = CASES[case]
    return SOURCE.replace("BUILD", build).replace("READ", read).replace("BODY", body)


def _eager(source: str, hs: list[torch.Tensor], calls: int) -> torch.Tensor:
    """The decorated source run as written, one stream, ``calls`` times (the objects keep their buffers between
    calls): what every target must compute."""
    module = types.ModuleType("eager_item_state")
    exec(compile(source, "<eager_item_state.py>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    model = module.Model()
    outputs = [model(hs) for _ in range(calls)]
    return outputs[-1]


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_race_free_and_exact(case: str, target: str) -> None:
    source = _source(case)
    hs = [torch.randn(2, 3) for _ in range(2)]
    code = transform_source(source, path="m.py", target=target)
    native = target == "cuda"  # native events are made at their first eager use
    got = trace_graph(code, target, lambda m: m.Model(), (hs,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, hs, 2 if native else 1))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_change_waits_for_the_call(case: str) -> None:
    """The loop's change of the object comes after the wait for the previous micro-batch's call."""
    code = transform_source(_source(case), path="m.py", target="portable")
    loop = code[code.index("for i in range(n):") :]
    change = next(line.strip() for line in CASES[case][2].splitlines() if "prepare" in line or "copy_" in line)
    assert "runtime.wait(" in loop[: loop.index(change)]
