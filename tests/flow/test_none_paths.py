"""A call guarded by ``self.on`` reads only what the paths where ``self.on`` holds made (``guard_paths.py``).

``if self.on: q, s = self.quant(x, True)`` then ``if q is None: q, s = x * 3, x + 1``: where ``self.on`` holds,
``q`` and ``s`` hold the side stream's results (``quant`` is annotated to return a tuple of tensors and always
returns one), so the next call on that stream needs no fork of its own. Every other shape keeps the fork: a
callee that may return None (no annotation, ``| None``, a ``return None``), a name rebound in between on the
caller's stream, or a branch under another guard. Every case runs under the race checker on every path and
equals the same arithmetic on one stream.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source

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

    @staticmethod
    @on_stream("side", when="enabled")
    def quant_bare(x, enabled):
        return x * 3, x + 1

    @staticmethod
    @on_stream("side", when="enabled")
    def quant_optional(x: torch.Tensor, enabled: bool) -> tuple[torch.Tensor, torch.Tensor] | None:
        return x * 3, x + 1

    @staticmethod
    @on_stream("side", when="enabled")
    def quant_none(x: torch.Tensor, enabled: bool) -> tuple[torch.Tensor, torch.Tensor]:
        if x.numel() == 0:
            return None
        return x * 3, x + 1

    @on_stream("side", when="self.on")
    def shared(self, q, s):
        return q * s

    def pruned(self, x):
        q = s = None
        if self.on: q, s = self.quant(x, True)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def rebound(self, x):
        q = s = None
        if self.on: q, s = self.quant(x, True)
        if self.large:
            q, s = x * 3, x + 1
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def other_guard(self, x):
        q = s = None
        if self.large: q, s = self.quant(x, True)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def bare(self, x):
        q = s = None
        if self.on: q, s = self.quant_bare(x, True)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def optional(self, x):
        q = s = None
        if self.on: q, s = self.quant_optional(x, True)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

    def returns_none(self, x):
        q = s = None
        if self.on: q, s = self.quant_none(x, True)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h

""" + caller_source()

_KEPT = ["rebound", "other_guard", "bare", "optional", "returns_none"]
_SYNC = re.compile(r"runtime\.(record|wait|record_stream|stream)\(")


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.find("\n    def ", start + 1)]


def _body(method: str) -> str:
    return _method(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_the_guarded_call_reads_only_the_side_streams_results() -> None:
    body = _body("pruned")
    assert "m.Model.shared.fork" not in body
    # the quantization's fork (record, switch, wait) and its input kept; the shared call's join; one switch
    # for both calls (``one_block.py``)
    assert len(_SYNC.findall(body)) == 6


@pytest.mark.parametrize("method", _KEPT)
def test_the_fork_stays_where_the_caller_may_have_made_the_input(method: str) -> None:
    body = _body(method)
    assert 'runtime.record("m.Model.shared.fork")' in body
    assert 'runtime.wait("m.Model.shared.fork")' in body


@pytest.mark.parametrize("large", [True, False])
@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", ["pruned", *_KEPT])
def test_race_free_and_exact(method: str, on: bool, large: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    got = run_checked(code, "portable", lambda m: m.Caller(method, on, large), (x,))
    torch.testing.assert_close(got, (x * 3) * (x + 1) + x * 5)
