"""A call whose result is read before any other work runs (past an ``if`` test that calls nothing) overlaps
nothing: it stays on its caller's stream, with no sync at all. A statement that computes before it reads the
result (``return self.routed(x) + out``, vllm_w8a8_shared's down projection) is work: its first operand is
bound to a name before the wait, and the call overlaps it."""

from __future__ import annotations

from codegen.driver.api import transform_source

SOURCE = """\
from torch import nn
from npudsl import on_stream


class Block(nn.Module):
    def __init__(self, dense):
        super().__init__()
        self.dense = dense

    @on_stream("side")
    def down(self, x):
        return x * 2

    def routed(self, x):
        return x + 1

    def forward(self, x):
        out = self.down(x)
        if self.dense:
            return out
        return out + self.routed(x)

    def computes_first(self, x):
        out = self.down(x)
        if self.dense:
            return out
        return self.routed(x) + out

    def overlapped(self, x):
        out = self.down(x)
        if self.dense:
            return out
        r = self.routed(x)
        return r + out
"""


def test_a_join_right_after_an_if_test_leaves_the_call_on_its_callers_stream() -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    forward = code.split("    def forward")[1].split("    def computes_first")[0]
    assert "runtime." not in forward and "out = self.down(x)" in forward


def test_work_before_the_join_on_one_path_keeps_the_call_on_its_stream() -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    assert 'with runtime.stream("side", 0):' in code.split("    def overlapped")[1]


def test_the_first_operand_runs_before_the_wait() -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    method = code.split("    def computes_first")[1].split("    def overlapped")[0]
    assert 'with runtime.stream("side", 0):' in method
    tail = method.split("            return out\n", 1)[1]
    assert tail == (
        '        runtime.record_stream(x, "side")\n'  # kept where the caller's stream first allocates (late_keeps.py)
        "        routed_1 = self.routed(x)\n"
        '        runtime.wait("m.Block.down.join")\n'
        "        return routed_1 + out\n\n"
    )
