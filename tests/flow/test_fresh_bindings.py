"""A name bound anew after a call no longer holds what the call reads (``codegen/lower/flow/fresh_bindings.py``).

``r = self.single(a)``, then ``a = x * 3`` and ``a.add_(1)``: the write is to the new ``a``. On main a pending
call's inputs were the names it read at the call, whatever the caller bound to them later, so that write waited for
the side call and the caller's work after it overlapped nothing. Now a binding to memory of its own drops the name
from the pending call's inputs: the wait moves to the read of ``r``. Where the new value may be the old memory
(``a = a.view(-1)``, ``a = self.pick(a)``), the write is in place (``a += 1``), some path keeps the old binding (an
``if``), a loop writes before it rebinds, or another name still holds the memory (``v = a[0]``), the write waits as
before. Every case runs race-checked on every target and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import checked_outputs

from codegen.driver.api import transform_source

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def single(self, h):
        return h * 2

    def pick(self, t):
        return t

    def rebound(self, x):
        a = x + 1
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        a = x * 3
        a.add_(1)
        return r + z + a

    def annotated(self, x):
        a = x + 1
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        a: torch.Tensor = x * 3
        a.add_(1)
        return r + z + a

    def viewed_again(self, x):
        a = x + 1
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        a = a.view(-1)
        a.add_(1)
        return r + z + a.view(x.shape)

    def picked(self, x):
        a = x + 1
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        a = self.pick(a)
        a.add_(1)
        return r + z + a

    def in_place(self, x):
        a = x + 1
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        a += 1
        a.add_(1)
        return r + z + a

    def one_branch(self, x):
        a = x + 1
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        if x.shape[0] > 8:
            a = x * 3
        a.add_(1)
        return r + z + a

    def looped(self, x):
        a = x + 1
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        for _ in range(2):
            z = z * 1
            a.add_(1)
            a = x * 3
        return r + z + a

    def view_kept(self, x):
        a = x + 1
        v = a[0]
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        a = x * 3
        v.add_(1)
        return r + z + a
""" + caller_source()

FREED = ["rebound", "annotated"]
KEPT = {"viewed_again": "a.add_(1)", "picked": "a.add_(1)", "in_place": "a += 1", "one_branch": "a.add_(1)"}
KEPT |= {"looped": "a.add_(1)", "view_kept": "v.add_(1)"}
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")
_WAIT = re.compile(r'runtime\.wait\("m\.Model\.single\.join"\)')


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", FREED)
def test_the_write_of_the_new_value_does_not_wait(method: str) -> None:
    body = _body(method)
    waits = [m.start() for m in _WAIT.finditer(body)]
    assert len(waits) == 1 and body.index("a.add_(1)") < waits[0] < body.index("return"), body


@pytest.mark.parametrize("method", sorted(KEPT))
def test_the_write_of_the_old_memory_waits(method: str) -> None:
    body = _body(method)
    assert body.index("z = ") < _WAIT.search(body).start() < body.index(KEPT[method]), body  # type: ignore[union-attr]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    """The same arithmetic, on one stream: the side call reads ``a`` before the caller writes anything."""
    a = x + 1
    if method in FREED:
        return a * 2 + 3 + (x * 3 + 1)
    if method == "in_place":
        return a * 2 + 3 + (a + 2)
    if method == "view_kept":
        return a * 2 + 3 + x * 3
    if method == "looped":
        return a * 2 + 3 + x * 3
    return a * 2 + 3 + (a + 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", [*FREED, *sorted(KEPT)])
def test_race_free_and_exact(method: str, target: str) -> None:
    x = torch.randn(4, 3)
    got = checked_outputs(SOURCE, target, method, x)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
