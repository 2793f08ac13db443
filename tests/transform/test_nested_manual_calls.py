"""Manual stream calls nested in one statement (vllm-ascend's ``part2(x, act(part1(x)))``) run whole on their stream.

A statement whose every call is a ``sync="manual"`` stream function of one stream and one guard has no join to
place, so it needs no binding: the call site switches the stream around the whole statement. A statement that
also calls something else, or mixes streams or guards, keeps running on its caller's stream (safe, no overlap).
"""

from __future__ import annotations

from codegen.driver.api import transform_source

SOURCE = """\
from torch import nn
from npudsl import on_stream


class Shared(nn.Module):
    @on_stream("s", sync="manual", when="self.on")
    def part1(self, x):
        return x * 2

    @on_stream("s", sync="manual", when="self.on")
    def act(self, x):
        return x.relu()

    @on_stream("s", sync="manual", when="self.on")
    def part2(self, x, a):
        return x + a

    @on_stream("t", sync="manual")
    def other(self, x):
        return x - 1

    def forward(self, x):
        return self.part2(x, self.act(self.part1(x)))

    def mixed(self, x):
        return self.part2(x, self.act(x).sum(0))

    def two_streams(self, x):
        return self.part2(x, self.other(x))
"""

FORWARD = """\
    def forward(self, x):
        with runtime.stream("s", 0) if self.on else nullcontext():
            if self.on:
                runtime.record_stream(x, "s")
            return self.part2(x, self.act(self.part1(x)))
"""


def test_a_statement_of_manual_calls_runs_whole_on_their_stream() -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert FORWARD in code
    assert transform_source(code, path="m.py", target="portable") == code


def test_a_statement_that_calls_more_stays_on_its_callers_stream() -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert "    def mixed(self, x):\n        return self.part2(x, self.act(x).sum(0))\n" in code
    assert "    def two_streams(self, x):\n        return self.part2(x, self.other(x))\n" in code
