"""A call under ``if self.on:`` and the next call on its stream share one ``with`` across statements the guard
rules out (``one_block.py``).

``if self.on: q, s = self.quant(x, True)``, ``if q is None: q, s = ...``, ``out = self.shared(q, s)``: where
``self.on`` holds the ``is None`` statement cannot run, so one ``with runtime.stream(...) if self.on else
nullcontext():`` holds the three (one switch, not two). A statement between that may run where ``self.on``
holds (an ``if`` under another flag: in one block its in-place write would run on the side stream, and the
caller would read it unsynchronized; a plain statement; an ``else``), or a first call under another guard,
keeps two blocks; so does a comment line between (the rewriters keep it above its own ``with``: one block
would be spelled as three). Every case runs under the race checker on every path and equals the same
arithmetic on one stream.
"""

from __future__ import annotations

import re

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


class Model(nn.Module):
    def __init__(self, on: bool, large: bool):
        super().__init__()
        self.on, self.large = on, large

    @staticmethod
    @on_stream("side", when="enabled")
    def quant(x: torch.Tensor, enabled: bool) -> tuple[torch.Tensor, torch.Tensor]:
        return x * 3, x + 1

    @on_stream("side", when="self.on")
    def shared(self, q, s):
        return q * s

    def joined(self, x):
        q = s = None
        if self.on:
            q, s = self.quant(x, True)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def one_line(self, x):
        q = s = None
        if self.on: q, s = self.quant(x, True)
        if q is None: q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def may_run(self, x):
        q = s = None
        k = x * 1
        if self.on:
            q, s = self.quant(x, True)
        if self.large:
            k.mul_(2)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5 + (k - k)
        return out + h

    def plain_between(self, x):
        q = s = None
        if self.on:
            q, s = self.quant(x, True)
        y = x * 1
        if q is None:
            q, s = y * 3, y + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def with_else(self, x):
        q = s = None
        if self.on:
            q, s = self.quant(x, True)
        if q is None:
            q, s = x * 3, x + 1
        else:
            x = x * 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def commented(self, x):
        q = s = None
        if self.on:
            q, s = self.quant(x, True)
        # the caller's own quantization
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def other_guard(self, x):
        q = s = None
        if self.large:
            q, s = self.quant(x, True)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

""" + caller_source()

_JOINED = ["joined", "one_line"]
_APART = ["may_run", "plain_between", "with_else", "other_guard", "commented"]
_SYNC = re.compile(r"runtime\.(record|wait|record_stream|stream)\(")


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", _JOINED)
def test_one_block_across_the_ruled_out_statement(method: str) -> None:
    body = _body(method)
    assert body.count("runtime.stream(") == 1
    # the quantization's fork (record, wait) and its input kept; one switch; the shared call's join
    assert len(_SYNC.findall(body)) == 6
    record, switch = body.index('runtime.record("m.Model.quant.fork")'), body.index("with runtime.stream(")
    assert record < switch < body.index('runtime.wait("m.Model.quant.fork")') < body.index("if q is None")
    assert 'with runtime.stream("side", 0) if self.on else nullcontext():' in body


@pytest.mark.parametrize("method", _APART)
def test_two_blocks_where_a_statement_between_may_run(method: str) -> None:
    body = _body(method)
    assert body.count("runtime.stream(") == 2
    assert body.index("if q is None") < body.rindex("runtime.stream(")


@pytest.mark.parametrize("large", [True, False])
@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", [*_JOINED, *_APART])
def test_race_free_and_exact(method: str, on: bool, large: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    got = run_checked(code, "portable", lambda m: m.Caller(method, on, large), (x,))
    torch.testing.assert_close(got, (x * 3) * (x + 1) + x * 5)
