"""A tensor made on side stream A and read on side stream B needs no ``record_stream`` for B when A issues nothing
more before the caller joins B (the DeepSeek-V3.2 indexer: ``q_scale`` made on "22", read on "33").

Only A's allocations can take that memory; A allocates again only in a later call on A, or in code that may run
one: anything but torch ops, tensor methods, torch.nn layers and this module's own functions of such code. A
later call on A, or a call the transformer cannot see into, keeps the ``record_stream``. Every module runs
under the race checker, called from a caller that makes its input right before the call.
"""

from __future__ import annotations

import sys

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream

from idle_maker_opaque import opaque


def scaled(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x) * 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    @on_stream("a")
    def make(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @on_stream("b")
    def read(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y

    def idle(self, x: torch.Tensor) -> torch.Tensor:
        y = self.make(x)
        z = self.read(x, y)
        w = scaled(self.proj(x)).sum(0)
        return z + w

    def busy_again(self, x: torch.Tensor) -> torch.Tensor:
        y = self.make(x)
        z = self.read(x, y)
        w = self.make(x + 1)
        v = scaled(x)
        return z + w + v

    def unseen_call(self, x: torch.Tensor) -> torch.Tensor:
        y = self.make(x)
        z = self.read(x, y)
        w = opaque(x + 1)  # not ``x``: an unseen function given ``x`` may write it, and is joined before
        return z + w

    def quiet(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 3
        y = self.read(h, h)
        z = self.make(x)
        w = y * 2
        return w + z

    def not_quiet(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 3
        y = self.read(h, h)
        z = self.make(x)
        v = x + 1
        w = y * 2
        return w + z + v


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.block, self.method = Block(), method

    def forward(self, x):
        out = getattr(self.block, self.method)(x.clone())
        return out + torch.ones_like(out)
"""

HELPERS = """\
import torch


def opaque(x):
    return x.sum(0)
"""


@pytest.mark.parametrize(("method", "kept"), [("quiet", False), ("not_quiet", True)])
def test_the_callers_stream_runs_no_op_until_the_join(method: str, kept: bool, tmp_path: object) -> None:
    """``h`` (made on the caller's stream) is read on "b"; until "b" is joined the caller only issues a call on
    "a": nothing it allocates can take ``h``'s memory. ``v = x + 1`` in between can."""
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert ('runtime.record_stream(h, "b")' in method_source(code, method)) is kept
    (tmp_path / "idle_maker_opaque.py").write_text(HELPERS)  # type: ignore[operator]
    sys.path.insert(0, str(tmp_path))
    try:
        run_checked(code, "portable", lambda m: m.Caller(method), (torch.arange(6.0).reshape(2, 3),))
    finally:
        sys.path.remove(str(tmp_path))


@pytest.mark.parametrize(("method", "kept"), [("idle", False), ("busy_again", True), ("unseen_call", True)])
def test_a_tensor_of_a_side_stream_that_issues_nothing_more(
    method: str, kept: bool, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert ('runtime.record_stream(y, "b")' in method_source(code, method)) is kept
    (tmp_path / "idle_maker_opaque.py").write_text(HELPERS)  # type: ignore[operator]
    monkeypatch.syspath_prepend(str(tmp_path))
    x = torch.arange(6.0).reshape(2, 3)
    run_checked(code, "portable", lambda m: m.Caller(method), (x,))
