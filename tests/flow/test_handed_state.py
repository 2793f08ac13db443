"""A write through what a method of the object hands out (``self.sub.buffers()``, ``state_dict()``) writes its state.

``y = self.side(x)``, whose body reads ``self.sub.w`` (a buffer), then ``ps = list(self.sub.buffers()); ps[0].add_(1)``
on the caller's stream: ``buffers()`` yields the buffer itself, so the write lands on ``self.sub.w`` while the side
stream may still read it. The local was taken to hold nothing of the object, and no wait came (the race checker on
main: "'self.model.sub.w' is read on stream 'side' ... and written in place on stream 'default' with no wait in
between"). A local bound to what a method of the object or of one of its attributes, asked with no positional
argument, returns (or to a function of it given only that, or iterating it) now holds that attribute
(``handed_state.py``): the write waits for the side call. ``sd = self.sub.state_dict(); sd["w"].add_(1)`` is the
same write (``state_dict`` returns the tensors detached: one memory); a read of such a local (``len(...)``) keeps the
overlap.
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

    def forward(self, x):
        return x * self.w


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()

    @on_stream("side")
    def side(self, x):
        return x * self.sub.w

    def listed(self, x):
        y = self.side(x)
        ps = list(self.sub.buffers())
        ps[0].add_(1)
        z = x * 5
        return y + z

    def looped(self, x):
        y = self.side(x)
        for b in self.sub.buffers():
            b.add_(1)
        z = x * 5
        return y + z

    def whole(self, x):
        y = self.side(x)
        sd = self.state_dict()
        sd["sub.w"].add_(1)
        z = x * 5
        return y + z

    def aliased(self, x):
        y = self.side(x)
        sd = self.sub.state_dict()
        sd["w"].add_(1)
        z = x * 5
        return y + z
""" + caller_source()

WRITES = {"listed": "ps[0].add_(1)", "looped": "b.add_(1)", "whole": 'sd["sub.w"].add_(1)', "aliased": 'sd["w"]'}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", WRITES)
def test_the_write_waits_for_the_side_call(method: str) -> None:
    body = _body(method)
    before = body[: body.index(WRITES[method])]
    assert re.search(r'runtime\.wait\("m\.Model\.side\.join"\)\s*$', before), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", WRITES)
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


HANDED = """\
def forward(self, hidden_states, **kwargs):
    attended, _ = self.self_attn(hidden_states=hidden_states, **kwargs)
    normed = self.norm(input=attended)
    ps = list(self.sub.buffers())
    sd = self.state_dict()
    return attended, normed, ps, sd
"""


def test_a_submodule_called_by_keyword_hands_out_no_state() -> None:
    """``self.self_attn(hidden_states=h, **kwargs)`` (every argument by keyword, as Hugging Face's decoder layers call
    attention) calls the submodule, no method of ``nn.Module`` handing out its tensors: its result is what
    ``forward`` makes. Counted as the object's state, it sent the next side call to the caller's stream (NPD501 on
    real decoder layers); ``buffers()`` and ``state_dict()`` still hand out state."""
    fn = ast.parse(HANDED).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert handed_state(fn, "self") == {"ps": frozenset({"sub"}), "sd": frozenset({"*"})}
