"""The portable target: npudsl.runtime calls, events by tag, the main stream switched to explicitly."""

from __future__ import annotations

from common_sources import AUTO
from targets_util import transform

SWITCH = """
import torch
from npudsl import after, core_limit, keep_output, on_stream, records


class Block(torch.nn.Module):
    @on_stream("side", 1, sync="manual", when="self.multistream")
    @core_limit(8, 16)
    @records("ready")
    @keep_output(clone=True)
    def produce(self, x):
        return x * 2, x + 1

    @on_stream("default")
    @after("ready")
    def consume(self, x):
        return x + 1
"""

SWITCH_OUT = """from contextlib import nullcontext

import torch
from npudsl import runtime


class Block(torch.nn.Module):
    def produce(self, x):
        with runtime.core_limit(8, 16) if self.multistream else nullcontext():
            out = x * 2
            out_1 = x + 1
            out = runtime.clone(out)
            out_1 = runtime.clone(out_1)
            runtime.record("m.Block.ready")
            return out, out_1

    def consume(self, x):
        runtime.wait("m.Block.ready")
        return x + 1
"""

AUTO_OUT = """import torch
from npudsl import runtime


class Shared(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def forward(self, x):
        runtime.record("m.Shared.forward.fork")
        with runtime.stream("shared", 0):
            runtime.wait("m.Shared.forward.fork")
            runtime.record_stream(x, "shared")
            s = self.shared(x)
            runtime.record("m.Shared.forward.join")
        y = x + 1
        runtime.wait("m.Shared.forward.join")
        return y + s
"""


def test_switch_events_core_limit_clone_and_guard() -> None:
    assert transform(SWITCH, "portable") == SWITCH_OUT


def test_automatic_fork_join_and_keep_output() -> None:
    assert transform(AUTO, "portable") == AUTO_OUT
