"""A stream call given an object its caller changed, whose class the run cannot name, stays at once (NPD501).

``box.load(x)`` leaves a tensor the caller's stream made on ``box``; ``self.side(box)`` (``box: Box``) reads it on
its side stream. Where the run can name what the body reads (``state_keeps.py``) the call keeps ``box.t`` and runs
apart. Where it cannot (``Box`` has a base, or comes from a module outside the run), main ran the call apart all the
same and kept the object by walking it (``record_stream(box, ...)``): ``torch.compile`` then guards on which
attributes the object has, and a ``Box`` the first call fills compiled again on the second call (two graphs). The
contract (docs/check.md, NPD501) is that such a call runs on its caller's stream, as written, and ``npudsl check``
says so: ``given_changed.py`` tells the index the call is given such an object. Race-free, exact, one graph for two
calls on every target here; an object the caller only passes on, or one whose class the run names, still overlaps.
The same object held in the caller's own state and given whole (``self.box.load(x)``; ``self.side(self.box)``) was
kept not at all on main: the side stream read ``t``, which ``take`` drops, while the caller's stream allocated over
it (the race checker: "made on stream 'default' ... read on stream 'side', then dropped"). It stays at once too.
"""

from __future__ import annotations

import re

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl.cli import main
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Base:
    pass


class Box(Base):
    def __init__(self):
        self.k = 2

    def load(self, x):
        self.t = x * self.k

    def take(self):
        t = self.t
        self.t = None
        return t + 3


class Model(nn.Module):
    @on_stream("side")
    def side(self, box: Box):
        return box.take()

    def passed(self, x, box):
        box.load(x)
        y = self.side(box)
        z = x * 3
        return y + z


class Caller(nn.Module):
    def __init__(self):
        super().__init__()
        self.model, self.box = Model(), Box()  # no ``t`` until the first call fills it

    def forward(self, x):
        return self.model.passed(x * 1, self.box)
"""
TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]


def _passed(code: str) -> str:
    return code[code.index("    def passed(") : code.index("class Caller")]


@pytest.mark.parametrize("target", TARGETS)
def test_the_call_stays_on_the_callers_stream(target: str) -> None:
    passed = _passed(transform_source(SOURCE, path="m.py", target=target))
    assert not re.search(r"record\w*\(box, ", passed), passed  # no walk of the object
    assert "stream" not in passed and "Stream" not in passed, passed


@pytest.mark.parametrize("target", TARGETS)
def test_two_calls_trace_one_graph_race_free(target: str) -> None:
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    code = transform_source(SOURCE, path="m.py", target=target)
    trace = trace_graph(code, target, lambda m: m.Caller(), (x,), calls=2, eager_first=native)
    torch.testing.assert_close(trace.outputs, x * 2 + 3 + x * 3)
    assert len(trace.dynamo) == 1, f"{len(trace.dynamo)} graphs for two calls (a recompile)"


def test_check_says_npd501(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text(SOURCE, encoding="utf-8")
    main(["check", str(tmp_path / "m.py")])
    out = capsys.readouterr().out
    assert re.search(r"m\.py:\d+:\d+: NPD501 warning: self\.side\(\.\.\.\) in Model\.passed reads tensors", out), out


@pytest.mark.parametrize(
    ("change", "apart"),
    [
        ("class Box(Base):", "class Box:"),  # the run names ``box.t``: kept by name, apart
        ("        box.load(x)\n", "        pass\n"),  # passed on unchanged: nothing the caller left on it
    ],
)
def test_a_named_or_unchanged_object_still_overlaps(change: str, apart: str) -> None:
    source = SOURCE.replace(change, apart)
    if apart == "        pass\n":
        source = source.replace("self.box = Model(), Box()", "self.box = Model(), _loaded()")
        source += "\n\ndef _loaded():\n    box = Box()\n    box.load(torch.ones(2, 3))\n    return box\n"
    passed = _passed(transform_source(source, path="m.py", target="portable"))
    assert "runtime.stream(" in passed, passed


OWN = SOURCE.replace(
    "class Model(nn.Module):\n",
    "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.box = Box()\n\n",
).replace("box.load(x)\n        y = self.side(box)", "self.box.load(x)\n        y = self.side(self.box)")


@pytest.mark.parametrize("target", TARGETS)
def test_own_state_given_whole_stays_at_once(target: str) -> None:
    passed = _passed(transform_source(OWN, path="m.py", target=target))
    assert "self.box.load(x)\n        y = self.side(self.box)" in passed and "tream" not in passed, passed


@pytest.mark.parametrize("target", TARGETS)
def test_own_state_given_whole_race_free(target: str) -> None:
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    code = transform_source(OWN, path="m.py", target=target)
    trace = trace_graph(code, target, lambda m: m.Caller(), (x,), calls=2, eager_first=native)
    torch.testing.assert_close(trace.outputs, x * 2 + 3 + x * 3)
