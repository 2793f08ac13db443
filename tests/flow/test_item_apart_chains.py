"""A micro-batch loop reading a list attribute of distinct objects without a local (``self.ds[i]``) runs apart too.

``self.ds = [Dispatcher(width) for _ in range(2)]``: the loop fills ``self.ds[i]``'s buffer, then gives it to
"comm". ``distinct_items.py`` found such lists only through a local (``ds = self.ds``); read as ``self.ds[i]`` the
loop now runs apart as well: micro-batch ``i`` fills its own dispatcher while micro-batch ``i - 1``'s dispatch still
reads its own (no wait in the loop; each call records its parity's event). What an item of a list attribute writes
is named as the list (``item_state_writes.py``), so the loop's write is kept apart from an earlier call's read only
for the item of this iteration, and only where nothing else reaches the list: the wait stays where the items may be
one object, where the callee reaches the list through its own object (``self.ds[1].buf``), where another statement of
the loop calls a method of the object that writes an item (``self.refill()``), and where the loop reads another item
(``self.ds[0]``). On main the loop waited only for the method (the item's own write was no write): one object twice
and a callee reaching the list raced. Every case is race-free and exact on every target.
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
        self.ds = BUILD

    def refill(self, h):
        self.ds[0].buf.add_(h)

    @on_stream("comm")
    def dispatch(self, d: Dispatcher):
        return READ

    def forward(self, hs: list[torch.Tensor]):
        n = len(hs)
        out: list[torch.Tensor | None] = [None] * n
        ys: list[torch.Tensor | None] = [None] * n
        for i in range(n):
            h = hs[i] + 1
            OTHER
            self.ds[i].prepare(h)
            out[i] = self.dispatch(self.ds[i])
        for i in range(n):
            ys[i] = out[i] * 3
        return torch.cat(ys)
"""
DISTINCT = "[Dispatcher(width) for _ in range(2)]"
WAITING = {
    "one_object": ("[Dispatcher(width)] * 2", "d.buf * 2", "pass"),
    "callee_reaches_the_list": (DISTINCT, "d.buf * 2 + self.ds[1].buf", "pass"),
    "a_method_writes_an_item": (DISTINCT, "d.buf * 2", "self.refill(h)"),
    "another_item": (DISTINCT, "d.buf * 2", "h = h + self.ds[0].buf"),
}
CASES = {"distinct": (DISTINCT, "d.buf * 2", "pass"), **WAITING}


def _source(case: str) -> str:
    build, read, other = CASES[case]
    return SOURCE.replace("BUILD", build).replace("READ", read).replace("OTHER", other)


def _loop(case: str) -> list[str]:
    code = transform_source(_source(case), path="m.py", target="portable")
    lines = [line.strip() for line in code.splitlines()]
    start = lines.index("for i in range(n):")
    return lines[start : lines.index("for i in range(n):", start + 1)]


def _eager(source: str, hs: list[torch.Tensor], calls: int) -> torch.Tensor:
    module = types.ModuleType("eager_item_chains")
    exec(compile(source, "<eager_item_chains.py>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    model = module.Model()
    return [model(hs) for _ in range(calls)][-1]


def test_distinct_items_of_an_attribute_run_apart() -> None:
    loop = _loop("distinct")
    assert not [line for line in loop if line.startswith("runtime.wait(") and "join" in line]
    assert 'runtime.record(("m.Model.dispatch.join", "m.Model.dispatch.join.2")[i % 2])' in loop


@pytest.mark.parametrize("case", sorted(WAITING))
def test_the_wait_stays(case: str) -> None:
    loop = _loop(case)
    assert loop.index('runtime.wait("m.Model.dispatch.join")') < loop.index("self.ds[i].prepare(h)")


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_race_free_and_exact(case: str, target: str) -> None:
    source, hs = _source(case), [torch.randn(2, 3) for _ in range(2)]
    code = transform_source(source, path="m.py", target=target)
    native = target == "cuda"  # native events are made at their first eager use
    got = trace_graph(code, target, lambda m: m.Model(), (hs,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, hs, 2 if native else 1))
