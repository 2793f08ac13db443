"""A write through what a method of the object returns of its state: ``ys = self.pair(x) + self.pair(x)`` where
``pair`` returns ``[self.a, self.b]``, then ``ys[0].add_(1)``.

``ys[0]`` *is* ``self.a``: the write changes the object's state, as ``self.a.add_(1)`` would. Only views of the
object (``v = self.a[0]``) and what torch's ``nn.Module`` methods hand out (``state_dict()``, ``buffers()``) were
read as holding state; a method of the run returning it was a call like any other, so the caller wrote ``self.a``
while a side call still read it (the race checker reports it on the previous main), through one call's result
(``y = self.get()``), a sum of two (lists joined) or a loop over it. ``returned_state_locals.py`` reads what the
method returns of its object; a method returning fresh tensors, or state the side call does not read, still lets
the write overlap the side call.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_files, run_generated
from method_caller import caller_source
from method_source import method_source

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.ones(2, 3))
        self.register_buffer("b", torch.full((2, 3), 2.0))

    @on_stream("side")
    def send(self, x):
        return x.tanh()

    def get(self):
        return self.a

    def pair(self, x):
        return [self.a, self.b]

    def fresh(self, x):
        return [x * 2, x * 3]

    def by_one(self, x):
        y = self.get()
        a = self.send(self.a)
        y.add_(1)
        return x + a

    def by_sum(self, x):
        ys = self.pair(x) + self.pair(x)
        a = self.send(self.a)
        ys[0].add_(1)
        return x + a

    def by_loop(self, x):
        ys = self.pair(x) + self.pair(x)
        a = self.send(self.b)
        for t in ys:
            t.mul_(2)
        return x + a

    def by_fresh(self, x):
        ys = self.fresh(x) + self.fresh(x)
        a = self.send(self.a)
        ys[0].add_(1)
        return ys[0] + a

    def by_other(self, x):
        ys = self.pair(x)
        a = self.send(x)
        ys[1].add_(1)
        return x + a
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

WRITING = {"by_one": "y.add_(1)", "by_sum": "ys[0].add_(1)", "by_loop": "t.mul_(2)"}
OVERLAPPING = {"by_fresh": "ys[0].add_(1)", "by_other": "ys[1].add_(1)"}


def _expected(x: torch.Tensor, method: str) -> torch.Tensor:
    """The second call's result (``run_generated`` calls the compiled model twice; the buffers carry over)."""
    if method == "by_loop":  # each call doubles self.b twice: the second call's side read sees 2 * 4
        return x + torch.tanh(torch.tensor(8.0))
    if method == "by_fresh":
        return x * 2 + 1 + torch.tanh(torch.tensor(1.0))
    if method == "by_other":
        return x + x.tanh()
    return x + torch.tanh(torch.tensor(2.0))  # the first call made self.a 2; the side call reads it before the write


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = generated_files(tmp_path, "pkg_returned_state", {"__init__.py": INIT, "model.py": MODEL}, target)
    return name, codes["model.py"]


def _waits_for_the_side(text: str) -> bool:
    return any(line.strip().startswith("runtime.wait(") and 'send.join")' in line for line in text.splitlines())


@pytest.mark.parametrize("method", WRITING)
def test_the_write_through_the_returned_state_waits_for_the_side_read(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    before, after = body.split(WRITING[method])
    joined = _waits_for_the_side(before) or "runtime.stream" not in before  # joined before it, or run at once
    assert joined and not _waits_for_the_side(after)  # the previous main waited after it


@pytest.mark.parametrize("method", OVERLAPPING)
def test_a_write_of_what_the_side_call_does_not_read_still_overlaps(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    before, after = body.split(OVERLAPPING[method])
    assert "runtime.stream" in before and not _waits_for_the_side(before) and _waits_for_the_side(after)


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITING, *OVERLAPPING])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, _expected(x, method))
