"""Idioms that were races or crashes, each race-free and exact now (or reported where it is made)."""

from __future__ import annotations

import pytest

from idioms.harness import check_idiom

_MODEL = """
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(4, 8))
        self.stash = None

    @on_stream("side")
    def branch(self, h, acc):
        BODY
        return h * 2

    def forward(self, x):
        h = x + 1
        acc = []
        y = self.branch(h, acc)
        z = x * 3
        CALLER
        state = h.sum() + self.buf.sum() + sum(t.sum() for t in acc) + (self.stash.sum() if self.stash is not None else 0)
        w = z * 2
        return y + w + state


def inputs():
    return (torch.randn(4, 8),)
"""  # noqa: E501 (a program kept as written)

CASES = {
    # the caller writes in place a tensor the side call reads
    "caller_iadd": ("pass", "h += 1"),
    "caller_item_store": ("pass", "h[0] = 0"),
    "caller_inplace_method": ("pass", "h.add_(1)"),
    "caller_out": ("pass", "torch.mul(x, 2, out=h)"),
    # the side body writes what the caller reads
    "body_writes_argument": ("h.mul_(2)", "pass"),
    "body_writes_buffer": ("self.buf.add_(1)", "pass"),
    "body_stashes_a_tensor": ("self.stash = h * 3", "pass"),
    "body_appends_to_a_list": ("acc.append(h * 5)", "pass"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_idiom_is_race_free_and_exact(case: str) -> None:
    body, caller = CASES[case]
    code = check_idiom(_MODEL.replace("BODY", body).replace("CALLER", caller))
    assert "runtime.stream(" in code  # the call still runs on its stream


FLIPPED_GUARD = """
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.multistream = True

    @on_stream("side", when="self.multistream")
    def branch(self, x):
        self.multistream = False  # the body flips its own guard: fork and join must read one value
        return x * 2

    def forward(self, x):
        y = x + 1
        a = self.branch(y)
        z = y * 5
        return a + z


def inputs():
    return (torch.randn(4, 8),)
"""


def test_a_guard_the_body_flips_is_read_once_at_the_call() -> None:
    code = check_idiom(FLIPPED_GUARD)
    assert "branch_forked = self.multistream" in code and code.count("self.multistream") == 3  # init, body, call


STAGED = """
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(()))
        self.stash = None
        self.w = nn.Parameter(torch.randn(8, 8))

    @on_stream("side")
    def stage(self, w):
        try:
            return w * 2
        finally:
            BODY

    def forward(self, x):
        a = self.stage(self.w)
        y = x * 2
        b = self.stage(self.w)
        z = y @ a
        z = z @ b
        return z + self.count + (self.stash.sum() if self.stash is not None else 0)


def inputs():
    return (torch.randn(4, 8),)
"""


@pytest.mark.parametrize("body, kept", [("self.count.add_(1)", False), ("self.stash = w + 1", True)])
def test_state_the_side_stream_writes_in_place_is_not_kept_alive(body: str, kept: bool) -> None:
    """The second call skips its fork, so the first call's results are kept alive at its join, where the main
    stream reads them: a buffer the body only adds to in place was made when the model was built (nothing of the
    side stream's to keep); a tensor the body stores on the object was made by the side stream."""
    code = check_idiom(STAGED.replace("BODY", body))
    assert "runtime.record_stream(a, runtime.current_stream())" in code
    assert ("runtime.record_stream(self.stash" in code) is kept
    assert "runtime.record_stream(self.count" not in code
