"""Join records decided per call stay readable wherever a ``when=`` guard skips a call.

``read_records.py`` drops a call's join record when another call of the same callee always records the event again
before any wait reads it. A call whose guard is false runs on its caller's stream and records nothing, so the walk
(``record_paths.py``) keeps, for a guarded call, the paths on which it did not run (``RecordWalk._simple``): the
earlier record stays the latest there. Checked here with ``side_b`` under ``when="self.f"``, ``side_a`` unguarded or
under ``when="self.g"`` on the same stream or another, both guards both ways, a branch that calls ``side_b`` again and
a loop that reads it in the next iteration, and a guard given as the callee's parameter (``when="on"``) with a
different value at each call: race-free and exact (every case on ``portable``, three on every target). No record is
missing (nothing to fix): the guarded record is kept where its event may be read without the later call
(``test_the_guarded_record_stays``).
"""

from __future__ import annotations

import itertools
import types

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

HEAD = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, f, g, again):
        super().__init__()
        self.f = f
        self.g = g
        self.again = again

    @on_stream("s"BWHEN)
    def side_b(self, x, on=True):
        return x * 2

    @on_stream(ATAG AWHEN)
    def side_a(self, x, on=True):
        return x + 5

    def forward(self, x):
"""

BODIES = {
    "branch": """\
        b = self.side_b(x)
        a = self.side_a(x)
        u = x * 7
        if self.again:
            u = u + a
            b = self.side_b(u)
        z = a * 2 + u
        w = b * 3
        return z + w
""",
    "loop": """\
        z = x
        for i in range(3):
            b = self.side_b(z)
            z = z * 3
            if self.again:
                z = z + b
        return z + b
""",
    "param": """\
        b = self.side_b(x, self.f)
        u = x * 7
        c = self.side_b(u, self.g and self.again)
        w = b * 3 + u
        return w + c
""",
}

_WHENS = {"none": "", "f": ', when="self.f"', "g": ', when="self.g"', "on": ', when="on"'}
_CASES = [
    ("branch", "f", "none", "s"),
    ("branch", "f", "g", "s"),
    ("branch", "f", "g", "t"),
    ("branch", "f", "f", "t"),
    ("loop", "f", "none", "s"),
    ("loop", "f", "g", "t"),
    ("param", "on", "none", "s"),
]
_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]
_RUNS = [(c, "portable") for c in _CASES] + [
    (c, t) for c in (_CASES[2], _CASES[5], _CASES[6]) for t in _TARGETS if t != "portable"
]


def _source(body: str, b_when: str, a_when: str, tag: str) -> str:
    head = HEAD.replace("BWHEN", _WHENS[b_when]).replace("AWHEN", _WHENS[a_when]).replace("ATAG", repr(tag))
    return head + BODIES[body]


def _eager(source: str, flags: tuple[bool, bool, bool], x: torch.Tensor) -> torch.Tensor:
    """The decorated source run as written (the decorators keep their meaning in eager mode)."""
    module = types.ModuleType("read_records_guards_eager")
    exec(compile(source, "<read_records_guards_eager>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    return module.Model(*flags)(x)  # type: ignore[no-any-return]


def test_the_guarded_record_stays() -> None:
    """``side_a`` on ``t``: where ``again`` is false the wait for ``b`` reads the first ``side_b``'s record, which
    stays, under the guard that skips the call."""
    code = transform_source(_source("branch", "f", "g", "t"), path="m.py", target="portable")
    lines = [line.strip() for line in method_source(code, "forward").splitlines()]
    at = lines.index("b = self.side_b(x)")
    assert lines[at + 1 : at + 3] == ["if self.f:", 'runtime.record("m.Model.side_b.join")']


@pytest.mark.parametrize(("case", "target"), _RUNS, ids=["-".join((*c, t)) for c, t in _RUNS])
def test_race_free_and_exact_both_ways(case: tuple[str, str, str, str], target: str) -> None:
    source = _source(*case)
    code = transform_source(source, path="m.py", target=target)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    for flags in itertools.product((False, True), repeat=3):
        x = torch.randn(2, 3)
        got = trace_graph(code, target, lambda m, f=flags: m.Model(*f), (x,), eager_first=native).outputs
        torch.testing.assert_close(got, _eager(source, flags, x))
