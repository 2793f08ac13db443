"""``b = self.get_buffer("sub.w"); b.add_(1)`` writes ``self.sub.w``: what ``nn.Module``'s methods asked by name hand
out is the object's state, as what they hand out asked with no argument (``test_handed_state.py``).

``get_buffer``, ``get_parameter`` and ``get_submodule`` take the path of what they return as a positional argument;
``handed_state.py`` only took methods asked with none, so a local bound to their result held nothing of the object,
and a write through it on the caller's stream raced with a side call still reading ``self.sub.w`` (main: "'self.model.
sub.w' is read on stream 'side' ... and written in place on stream 'default' with no wait in between"); the other
way round, a side body writing through such a local left the caller's later read of ``self.sub.w`` unordered. A local
bound to what any method ``nn.Module`` defines returns now holds the state of the object it is asked of (its own:
any attribute), whatever the arguments.
"""

from __future__ import annotations

import ast
import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.handed_state import handed_state
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.full((3,), 2.0))
        self.p = nn.Parameter(torch.full((3,), 4.0), requires_grad=False)

    def forward(self, x):
        return x * self.w


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()

    @on_stream("side")
    def side(self, x):
        return x * self.sub.w + self.sub.p

    @on_stream("side")
    def side_writes(self, x):
        b = self.get_buffer("sub.w")
        b.add_(1)
        return x * 2

    def own_buffer(self, x):
        y = self.side(x)
        b = self.get_buffer("sub.w")
        b.add_(1)
        return y + x

    def sub_buffer(self, x):
        y = self.side(x)
        b = self.sub.get_buffer("w")
        b.add_(1)
        return y + x

    def sub_parameter(self, x):
        y = self.side(x)
        p = self.sub.get_parameter("p")
        p.mul_(3)
        return y + x

    def submodule(self, x):
        y = self.side(x)
        s = self.get_submodule("sub")
        s.w.add_(1)
        return y + x

    def side_hands_out(self, x):
        y = self.side_writes(x)
        z = x * self.sub.w
        return y + z
""" + caller_source()

WRITES = {
    "own_buffer": "b.add_(1)",
    "sub_buffer": "b.add_(1)",
    "sub_parameter": "p.mul_(3)",
    "submodule": "s.w.add_(1)",
    "side_hands_out": "z = x * self.sub.w",
}


@pytest.mark.parametrize("method", WRITES)
def test_the_write_waits_for_the_side_call(method: str) -> None:
    """Joined right before it, or (nothing of the caller's between) run on the caller's stream."""
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    before = body[: body.index(WRITES[method])]
    assert "runtime." not in body or re.search(r'runtime\.wait\("m\.Model\.side\.join"\)\s*$', before), body


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("method", WRITES)
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    eager = target == "cuda"  # its events are made on a first eager step
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,), eager_first=eager)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,), eager_first=eager)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


HANDED = """\
def forward(self, x):
    b = self.get_buffer("sub.w")
    p = self.sub.get_parameter("p")
    s = self.get_submodule("sub")
    z = self.sub._call_impl(x)
    w = self.sub._wrapped_call_impl(x)
    return b, p, s, z, w
"""


def test_asked_by_name_hands_out_state_and_a_call_of_forward_does_not() -> None:
    """The object's own method holds any of its state (the path is a string the run does not read); ``_call_impl``
    returns what ``forward`` makes (``torch_forward_runs.py``), as a call of the submodule does."""
    fn = ast.parse(HANDED).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert handed_state(fn, "self") == {"b": frozenset({"*"}), "p": frozenset({"sub"}), "s": frozenset({"*"})}
