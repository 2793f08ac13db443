"""A submodule whose class the run cannot tell writes every argument its caller hands it.

``self.mid = layer()`` in ``def __init__(self, layer=Bump)`` calls the parameter, not the module's ``def layer() ->
Quiet: return Quiet()``; the index read the name called as the module's factory (``factory_made.py``), so
``self.mid(x)`` was ``Quiet.forward`` (writes nothing) while it is ``Bump.forward`` (doubles its input in place), and
the caller ran it while the side stream still read ``x``. Now a call of a name ``__init__`` binds itself makes no
known class (``scan.own_call``). And a submodule of no known class (that one, or ``Bump() if flag else Quiet()``) was
read as writing nothing (``imported_writes._inherited``: no base assigns it, no base defines the method); it now
writes every argument (``class_chain.unknown_attribute``: the object stores it, no ``__init__`` says its class): the
side call, which would join right before it, runs at once. Both raced on main (StreamRaceError on portable,
aclgraph, npugraph_ex, cuda); a known class (``self.quiet = Quiet()``) still overlaps the side call.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Bump(nn.Module):
    def forward(self, t):
        t.mul_(2)
        return t


class Quiet(nn.Module):
    def forward(self, t):
        return t * 1


def layer() -> Quiet:
    return Quiet()


class Model(nn.Module):
    def __init__(self, layer=Bump, flag=True):
        super().__init__()
        self.mid = layer()
        self.either = Bump() if flag else Quiet()
        self.quiet = Quiet()

    @on_stream("side")
    def side(self, c):
        return c.tanh()

    def shadowed(self, x):
        a = self.side(x)
        h = self.mid(x)
        return h + a

    def either_one(self, x):
        a = self.side(x)
        h = self.either(x)
        return h + a

    def known(self, x):
        a = self.side(x)
        h = self.quiet(x)
        return h + a
""" + caller_source()

WRITTEN = ["shadowed", "either_one"]
TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]


_JOIN = 'runtime.wait("m.Model.side.join")'


@pytest.mark.parametrize("method", WRITTEN)
def test_the_call_of_an_unknown_class_does_not_overlap_the_side_read(method: str) -> None:
    """The side call would join right before ``self.mid(x)``: it runs at once, on the caller's stream (on main: it
    was forked and joined after the call that doubles ``x``)."""
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert "runtime.stream(" not in body and _JOIN not in body


def test_a_known_class_writing_nothing_still_overlaps() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "known")
    assert body.index('runtime.stream("side"') < body.index("h = self.quiet(x)") < body.index(_JOIN)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", [*WRITTEN, "known"])
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    got = run_checked(code, target, lambda m: m.Caller(method), (x.clone(),), eager_first=native)
    torch.testing.assert_close(got, x * (1 if method == "known" else 2) + x.tanh())
