"""A view taken on the caller's stream between a call and its join allocates nothing: the input stays unkept.

``y = self.a(t)``, then ``v = x.view(2, 3)`` (an op whose schema returns a view of ``self`` and runs no kernel:
``aliasing.py``), then the join: the caller's stream allocates nothing from the call to the join, so ``t`` (made
by the caller, last read by ``a``) cannot go to a new allocation while ``a`` reads it (``quiet.quiet_until``).
``x.clone()`` in its place allocates: the keep stays, and taking it out races (the race checker says so).
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def a(self, x):
        return x * 2

    def view_between(self, x):
        t = x * 3
        y = self.a(t)
        v = x.view(2, 3)
        return y + v

    def clone_between(self, x):
        t = x * 3
        y = self.a(t)
        v = x.clone()
        return y + v
""" + caller_source()

_KEEP = re.compile(r"runtime\.record_stream\(t, \"side\"\)")


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def test_a_view_between_needs_no_keep() -> None:
    body = method_source(_code(), "view_between")
    assert body.count("runtime.stream(") == 1 and "record_stream" not in body


def test_a_clone_between_keeps_the_input() -> None:
    assert len(_KEEP.findall(method_source(_code(), "clone_between"))) == 1


@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", ["view_between", "clone_between"])
def test_race_free_and_exact(method: str, target: str) -> None:
    x = torch.randn(2, 3)
    got = run_checked(_code(target), target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, x * 6 + x)


def test_without_the_keep_the_clone_races() -> None:
    code = _KEEP.sub("pass", _code())
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(code, "portable", lambda m: m.Caller("clone_between"), (torch.randn(2, 3),))
