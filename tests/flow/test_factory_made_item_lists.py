"""A list of distinct objects held by a submodule that a factory function or a base class's ``__init__`` makes.

``ds = self.sub.dispatchers`` where ``self.sub = make_holder(width)`` (``def make_holder(width: int) -> Holder: return
Holder(width)``) or ``self.based``, assigned by a base's ``__init__`` (``super().__init__(width)``), and
``Holder.__init__`` builds ``self.dispatchers = [Dispatcher(width) for _ in range(2)]``: micro-batch ``i`` fills its
own dispatcher while micro-batch ``i - 1``'s call still reads another one (``distinct_items.py``, as
``test_distinct_items.py`` for a list of the caller's own class). ``distinct_items._attribute_list`` read each holder
among the class's own ``__init__`` assignments by the name called, so on main ``sub`` held ``make_holder`` and
``based`` nothing: micro-batch ``i`` waited for the previous call (no overlap). Both are read now
(``object_chains.held_class``, through ``class_chain.submodule_classes``); ``self.direct = Holder(width)`` was read
on main too. Race-free and exact, and dropping the wait for one object twice still races.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
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


class Holder(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.dispatchers = BUILD


def make_holder(width: int) -> Holder:
    return Holder(width)


class Base(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.based = Holder(width)


class Model(Base):
    def __init__(self, width: int = 3) -> None:
        super().__init__(width)
        self.sub = make_holder(width)
        self.direct = Holder(width)

    @on_stream("comm")
    def dispatch(self, d: Dispatcher):
        return d.buf * 2

    def forward(self, hs: list[torch.Tensor]):
        n = len(hs)
        out: list[torch.Tensor | None] = [None] * n
        ys: list[torch.Tensor | None] = [None] * n
        ds = self.HOLDER.dispatchers
        for i in range(n):
            h = hs[i] + 1
            ds[i].prepare(h)
            out[i] = self.dispatch(ds[i])
        for i in range(n):
            ys[i] = out[i] * 3
        return torch.cat(ys)
"""
DISTINCT = "[Dispatcher(width) for _ in range(2)]"
HOLDERS = ["sub", "based", "direct"]
WAIT = 'runtime.wait("m.Model.dispatch.join")'


def _code(holder: str, target: str = "portable", build: str = DISTINCT) -> str:
    return transform_source(SOURCE.replace("HOLDER", holder).replace("BUILD", build), path="m.py", target=target)


def _first_loop(code: str) -> list[str]:
    lines = [line.strip() for line in method_source(code, "forward").splitlines()]
    start = lines.index("for i in range(n):")
    return lines[start : lines.index("for i in range(n):", start + 1)]


@pytest.mark.parametrize("holder", HOLDERS)
def test_distinct_objects_do_not_wait_for_the_previous_call(holder: str) -> None:
    """On main: ``sub`` and ``based`` waited before ``ds[i].prepare(h)``."""
    assert WAIT not in _first_loop(_code(holder))


@pytest.mark.parametrize("holder", HOLDERS)
def test_one_object_twice_keeps_the_wait(holder: str) -> None:
    loop = _first_loop(_code(holder, build="[Dispatcher(width)] * 2"))
    assert loop.index(WAIT) < loop.index("ds[i].prepare(h)")


def _run(code: str, count: int, target: str = "portable", build: str = DISTINCT) -> None:
    hs = [torch.randn(2, 3) for _ in range(count)]
    native = target == "cuda"  # native events are made at their first eager use
    build_model = lambda m: m.Model()  # noqa: E731
    got = trace_graph(code.replace(DISTINCT, build), target, build_model, (hs,), eager_first=native).outputs
    torch.testing.assert_close(got, torch.cat([(h + 1) * 6 for h in hs]))


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("holder", HOLDERS)
def test_race_free_and_exact(holder: str, target: str, count: int) -> None:
    _run(_code(holder, target), count, target)


@pytest.mark.parametrize("holder", HOLDERS)
def test_one_object_twice_races_without_the_wait(holder: str) -> None:
    with pytest.raises(StreamRaceError):
        _run(_code(holder), 2, build="[Dispatcher(width)] * 2")
