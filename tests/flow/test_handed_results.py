"""A write through what a call hands out of an object's state: ``self.sub.buf().add_(1)`` where ``def buf(self):
return self.b``, ``t = self.sub.buf(); t.add_(1)``, ``self.get_submodule("sub").b.add_(1)``.

The caller's writes were read by the spelling of their root (``written_exprs.py``, ``state_views.py``): a chain
that starts at a call reached no state, and a local bound to what a method of the run returns held none. So the
write ran on the caller's stream while a side call still read ``self.sub.b`` (main: "tensor 'self.model.sub.b' is
read on stream 'side' ... and written in place on stream 'default' with no wait in between"), and the other way
round a side body writing through such a call left the caller's later read of ``self.sub.b`` unordered, and a side
call given such a local (``t = self.sub.picked(); self.side_given(x, t)``) did not hold it against a later write of
``self.sub.b``. What a
method of the run returns is read through its ``return`` statements (``handed_results.py``), a property's too; what
``nn.Module``'s methods hand out by name (``get_buffer``, ``get_submodule``) as for an assigned result
(``handed_state.py``). A method returning what it makes (``return self.b * 2``) hands out nothing: the write through
its result keeps the overlap. A method of a class from outside the run (``ExtSub``, a library's) may hand out any
of its object (``unread_methods.py``): a write through its result waits for a side call reading any of ``self.ext``,
even when the call was made before the side call (``outside_held_before``). Files transformed together or alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

SUB = """\
import torch
from torch import nn


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.full((3,), 2.0))
        self.cache = [torch.full((3,), 3.0)]

    def buf(self):
        return self.b

    def first(self):
        return self.cache[0]

    def picked(self):
        t = self.buf()
        return t

    @property
    def prop(self):
        return self.b

    def fresh(self):
        return self.b * 2

    def forward(self, x):
        return x * self.b
"""

EXTSUB = SUB.replace("class Sub(", "class ExtSub(")  # a class from outside the run: a library's

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from extsub import ExtSub

from .sub import Sub


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.ext = ExtSub()
        self.register_buffer("own", torch.full((3,), 5.0))

    def mine(self):
        return self.own

    @on_stream("side")
    def side(self, x):
        return x * self.sub.b + self.sub.cache[0] + self.own + self.ext.b

    @on_stream("side")
    def side_inline_writes(self, x):
        self.sub.buf().add_(1)
        return x * 2

    @on_stream("side")
    def side_local_writes(self, x):
        t = self.sub.picked()
        t.add_(1)
        return x * 2

    @on_stream("side")
    def side_given(self, x, t):
        return x * t

    def method_inline(self, x):
        y = self.side(x)
        self.sub.buf().add_(1)
        return y + x

    def method_local(self, x):
        y = self.side(x)
        t = self.sub.picked()
        t.add_(1)
        return y + x

    def own_method(self, x):
        y = self.side(x)
        self.mine().add_(1)
        return y + x

    def property_inline(self, x):
        y = self.side(x)
        self.sub.prop.add_(1)
        return y + x

    def item_inline(self, x):
        y = self.side(x)
        self.sub.first()[0].zero_()
        return y + x

    def held_before(self, x):
        t = self.sub.buf()
        y = self.side(x)
        t.add_(1)
        return y + x

    def submodule_inline(self, x):
        y = self.side(x)
        self.get_submodule("sub").b.add_(1)
        return y + x

    def buffer_inline(self, x):
        y = self.side(x)
        self.sub.get_buffer("b").mul_(2)
        return y + x

    def side_writes_inline(self, x):
        y = self.side_inline_writes(x)
        z = x * self.sub.b
        return y + z

    def side_writes_local(self, x):
        y = self.side_local_writes(x)
        z = x * self.sub.b
        return y + z

    def given_held(self, x):
        t = self.sub.picked()
        y = self.side_given(x, t)
        self.sub.b.add_(1)
        return y + x

    def outside_inline(self, x):
        y = self.side(x)
        self.ext.buf().add_(1)
        return y + x

    def outside_held_before(self, x):
        t = self.ext.buf()
        y = self.side(x)
        t.add_(1)
        return y + x

    def fresh(self, x):
        y = self.side(x)
        t = self.sub.fresh()
        t.add_(1)
        return y + t
""" + caller_source()

WRITES = {
    "method_inline": "self.sub.buf().add_(1)",
    "method_local": "t.add_(1)",
    "own_method": "self.mine().add_(1)",
    "property_inline": "self.sub.prop.add_(1)",
    "item_inline": "self.sub.first()[0].zero_()",
    "held_before": "t.add_(1)",
    "submodule_inline": 'self.get_submodule("sub").b.add_(1)',
    "buffer_inline": 'self.sub.get_buffer("b").mul_(2)',
    "side_writes_inline": "z = x * self.sub.b",
    "side_writes_local": "z = x * self.sub.b",
    "given_held": "self.sub.b.add_(1)",
    "outside_inline": "self.ext.buf().add_(1)",
    "outside_held_before": "t.add_(1)",
}
JOIN = re.compile(r'runtime\.wait\("[\w.]+\.side(_inline_writes|_local_writes|_given)?\.join"\)\s*$')


def _generated(tmp_path: Path, target: str, *, alone: bool = False, plain: bool = False) -> tuple[str, str]:
    model = MODEL.replace('@on_stream("side")\n    ', "") if plain else MODEL
    stem = f"handed_{'plain' if plain else 'streams'}_{'alone' if alone else 'together'}"
    name, codes = written_package(
        tmp_path, stem, target, {"model.py": model, "sub.py": SUB}, beside={"extsub.py": EXTSUB}, alone=alone
    )
    return name, codes["model.py"]


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("method", WRITES)
def test_the_write_waits_for_the_side_call(tmp_path: Path, method: str, alone: bool) -> None:
    """Joined right before it, or (nothing of the caller's between) run on the caller's stream."""
    body = method_source(_generated(tmp_path, "portable", alone=alone)[1], method)
    before = body[: body.index(WRITES[method])]
    assert "runtime.stream" not in before or JOIN.search(before), body


def test_a_method_returning_what_it_makes_keeps_the_overlap(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "fresh")
    before, after = body.split("t.add_(1)")
    assert "runtime.stream" in before and not JOIN.search(before) and "runtime.wait(" in after, body


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("method", [*WRITES, "fresh"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    eager = target == "cuda"  # its events are made on a first eager step
    x = torch.randn(2, 3)
    results = []
    for plain in (True, False):
        name, _ = _generated(tmp_path, target, alone=alone, plain=plain)
        results.append(
            run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=eager, method=method)
        )
    torch.testing.assert_close(results[1], results[0], rtol=0, atol=0)
