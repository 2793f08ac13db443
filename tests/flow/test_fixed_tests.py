"""A call forked under ``if has:`` and read under a later ``if has:`` is joined there, not again at the return.

Found porting vllm-ascend's context-parallel attention (``corpus.vllm_cp_chunked_prefill``): it binds
``has_chunked_context = meta.chunked_context is not None`` once, gathers the query on the communication stream
under ``if has_chunked_context:`` and reads it under a later ``if has_chunked_context:``. Both tests read one
value, so no run reaches the return with the gather pending; before, the merge of paths kept it pending on the
path where the first test held and the second did not, and every call waited for it a second time before it
returned (``fixed_tests.py``). A name bound again between the tests, bound in a loop, or a comparison's result
that escapes to other code reads no fixed value: there the wait at the return stays.
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


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def taken(self, x):
        ctx = None if x.dim() == 3 else x
        has = ctx is not None
        if has:
            y = self.side(x)
        z = x + 1
        if has:
            z = z + y
        w = z * 3
        return w

    def not_taken(self, x):
        ctx = x if x.dim() == 3 else None
        has = ctx is not None
        if has:
            y = self.side(x)
        z = x + 1
        if has:
            z = z + y
        w = z * 3
        return w

    def negated(self, x):
        flat = x.dim() == 2
        if not flat:
            return x
        if flat:
            y = self.side(x)
        z = x + 1
        if flat:
            z = z + y
        w = z * 3
        return w

    def around_a_loop(self, x):
        has = x.dim() == 2
        z = x + 1
        for i in range(2):
            if has:
                y = self.side(x)
            z = z * 2
            if has:
                z = z + y
        w = z * 3
        return w

    def elif_chain(self, x):
        has = x.dim() == 2
        other = x.dim() == 3
        if has:
            y = self.side(x)
        elif other:
            x = x * 5
        z = x + 1
        if not has:
            z = z - 1
        elif other:
            z = z * 7 + y
        else:
            z = z + y
        w = z * 3
        return w

    def rebound(self, x):
        has = x.dim() == 2
        if has:
            y = self.side(x)
        z = x + 1
        has = x.dim() == 3
        if has:
            z = z + y
        w = z * 3
        return w

    def in_a_loop(self, x):
        z = x + 1
        for i in range(2):
            has = i == 0
            if has:
                y = self.side(x)
            z = z * 2
            if has:
                z = z + y
        return z

    def escapes(self, x):
        has = x.dim() == 2
        if has:
            y = self.side(x)
        z = x + 1
        flags = [has]
        if has:
            z = z + y
        w = z * 3
        return w + len(flags)
""" + caller_source()

JOIN = 'runtime.wait("m.Model.side.join")'


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


TOP_LEVEL_JOIN = f"\n        if side_forked:\n            {JOIN}"


@pytest.mark.parametrize("method", ["taken", "not_taken", "negated", "around_a_loop", "elif_chain"])
def test_a_fixed_test_joins_once(method: str) -> None:
    """One wait where the later test reads the result (or just before that ``if``; one per branch that reads it),
    none at the return."""
    body = _body(method)
    assert body.count(JOIN) == (2 if method == "elif_chain" else 1), body
    assert TOP_LEVEL_JOIN not in body.split("z = x + 1")[1] or method == "negated", body
    assert body.index(JOIN) > body.index("z = x + 1")


@pytest.mark.parametrize("method", ["rebound", "in_a_loop", "escapes"])
def test_a_test_that_may_read_another_value_joins_on_every_path(method: str) -> None:
    """The wait stands outside every ``if has:`` (before the later one, or at the return)."""
    assert TOP_LEVEL_JOIN in _body(method)


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    if method == "escapes":
        return (x + 1 + x * 2) * 3 + 1
    if method == "around_a_loop":
        return (((x + 1) * 2 + x * 2) * 2 + x * 2) * 3
    if method in ("taken", "negated", "elif_chain"):
        return (x + 1 + x * 2) * 3
    if method == "in_a_loop":
        return ((x + 1) * 2 + x * 2) * 2
    return (x + 1) * 3


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize(
    "method", ["taken", "not_taken", "negated", "around_a_loop", "elif_chain", "rebound", "in_a_loop", "escapes"]
)
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, _want(method, x))
