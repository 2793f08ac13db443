"""A call's join record is written only where some wait can read it (decided per call, not per event).

``b`` and ``a`` on stream ``s``; under ``if self.again:`` ``a`` joined and ``side_b`` called again, then ``a`` and
``b`` read. The wait for ``side_a.join`` before the ``if`` orders the first ``side_b``; the wait for ``b`` runs under
the flag the second ``side_b`` sets, after its own record: no wait reads the first call's ``side_b.join`` record,
though both calls share the event. With ``side_a`` on another stream the first record is read (where ``again`` is
false) and stays; so does a record a later loop iteration or the code after the loop reads. Race-checked and exact
on every target, both ways through the branch.
"""

from __future__ import annotations

import types

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, again):
        super().__init__()
        self.again = again

    @on_stream("s")
    def side_b(self, x):
        return x * 2

    @on_stream(TAG)
    def side_a(self, x):
        return x + 5

    def forward(self, x):
BODY"""

BRANCH = """\
        b = self.side_b(x)
        a = self.side_a(x)
        u = x * 7
        if self.again:
            u = u + a
            b = self.side_b(u)
        z = a * 2 + u
        w = b * 3
        return z + w
"""

LOOP = """\
        z = x
        for i in range(3):
            b = self.side_b(z)
            z = z * 3
            if self.again:
                z = z + b
        return z + b
"""

_RECORD = 'runtime.record("m.Model.side_b.join")'
_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


def _source(body: str, tag: str) -> str:
    return SOURCE.replace("TAG", repr(tag)).replace("BODY", body)


def _lines(body: str, tag: str) -> list[str]:
    code = transform_source(_source(body, tag), path="m.py", target="portable")
    return [line.strip() for line in method_source(code, "forward").splitlines()]


def test_a_record_no_wait_reads_is_dropped() -> None:
    lines = _lines(BRANCH, "s")
    assert lines.count(_RECORD) == 1
    assert lines.index(_RECORD) == lines.index("b = self.side_b(u)") + 1
    assert lines.index('runtime.record("m.Model.side_a.join")') == lines.index("a = self.side_a(x)") + 1


def test_a_record_read_where_the_branch_is_not_taken_stays() -> None:
    """``side_a`` on ``t``: the wait for ``b`` after the ``if`` reads the first record where ``again`` is false."""
    lines = _lines(BRANCH, "t")
    assert lines.count(_RECORD) == 2
    assert lines.index(_RECORD) == lines.index("b = self.side_b(x)") + 1


def test_a_record_read_in_the_next_iteration_or_after_the_loop_stays() -> None:
    lines = _lines(LOOP, "s")
    assert lines.index(_RECORD) == lines.index("b = self.side_b(z)") + 1


def _eager(source: str, again: bool, x: torch.Tensor) -> torch.Tensor:
    """The decorated source run as written (the decorators keep their meaning in eager mode)."""
    module = types.ModuleType("read_records_eager")
    exec(compile(source, "<read_records_eager>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    return module.Model(again)(x)  # type: ignore[no-any-return]


@pytest.mark.parametrize("again", [False, True])
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize(("body", "tag"), [(BRANCH, "s"), (BRANCH, "t"), (LOOP, "s")], ids=["s", "t", "loop"])
def test_race_free_and_exact(body: str, tag: str, target: str, again: bool) -> None:
    source, x = _source(body, tag), torch.randn(2, 3)
    code = transform_source(source, path="m.py", target=target)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = trace_graph(code, target, lambda m: m.Model(again), (x,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, again, x))
