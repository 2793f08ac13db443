"""The caller's stream writing in place state that a pending side call reads waits for that call first.

``y = self.side(x)``, whose body reads ``self.buf``, then ``self.buf.mul_(2)``: before, the planner joined a pending
call only before a statement that read its result or wrote the caller's tensors it was given, so the write of
``self.buf`` ran on the main stream while the side stream could still read it (the race checker: "read on stream
'side' ... and written in place on stream 'default' with no wait in between"). Likewise a submodule's state
(``self.sub.scale.mul_(2)`` after ``self.sub(x)``), a store into an item and an augmented assignment of one. A write of
state the call does not read keeps the overlap. A planned call on another stream whose body writes that state
(``w = self.doubled(x)``, ``self.buf.mul_(2)`` on stream ``"other"``) waits for the pending call on its own stream.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((3,), 2.0))

    @on_stream("side")
    def forward(self, x):
        return x * self.scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((3,), 2.0))
        self.register_buffer("other", torch.full((3,), 2.0))
        self.sub = Sub()

    @on_stream("side")
    def side(self, x):
        return x * self.buf

    def own_state(self, x):
        y = self.side(x)
        self.buf.mul_(2)
        z = x * 5
        self.buf.div_(2)
        return y + z

    def submodule_state(self, x):
        y = self.sub(x)
        self.sub.scale.mul_(2)
        z = x * 5
        self.sub.scale.div_(2)
        return y + z

    def item_store(self, x):
        y = self.side(x)
        self.buf[0] = 7.0
        z = x * 5
        self.buf[0] = 2.0
        return y + z

    def augmented(self, x):
        y = self.side(x)
        self.buf[0] += 1
        z = x * 5
        self.buf[0] -= 1
        return y + z

    @on_stream("other")
    def doubled(self, x):
        self.buf.mul_(2)
        return x * 0

    def call_on_another_stream(self, x):
        y = self.side(x)
        w = self.doubled(x)
        z = x * 5
        self.buf.div_(2)
        return y + z + w

    def unread_state(self, x):
        y = self.side(x)
        self.other.mul_(2)
        z = x * 5
        self.other.div_(2)
        return y + z
""" + caller_source()

WRITES = {  # the method -> its first write of the state its call reads
    "own_state": "self.buf.mul_(2)",
    "submodule_state": "self.sub.scale.mul_(2)",
    "item_store": "self.buf[0] = 7.0",
    "augmented": "self.buf[0] += 1",
}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = written_package(tmp_path, "state_writes", target, {"model.py": MODEL})
    return name, codes["model.py"]


@pytest.mark.parametrize("method", WRITES)
def test_the_write_waits_for_the_call(tmp_path: Path, method: str) -> None:
    """No side-stream call still pending at the write: joined before it, or (read right away) never forked."""
    body = method_source(_generated(tmp_path, "portable")[1], method)
    before = body[: body.index(WRITES[method])]
    assert before.count("runtime.record(") <= before.count("runtime.wait(")


def test_a_call_writing_the_state_on_another_stream_waits_for_it(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "call_on_another_stream")
    before = body[: body.index("w = self.doubled(x)")]
    assert 'runtime.stream("side"' not in before or re.search(r'runtime\.wait\("[\w.]*Model\.side\.join"\)', before)


def test_a_write_of_other_state_keeps_the_overlap(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "unread_state")
    assert body.index('runtime.stream("side"') < body.index("self.other.mul_(2)") < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITES, "call_on_another_stream", "unread_state"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    """The same math as on one stream: the call reads the state as it was before the write."""
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, x * 2 + x * 5, rtol=0, atol=0)
