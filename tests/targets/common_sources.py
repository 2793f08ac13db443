"""Sources shared by the target tests: manual events with every decorator, and an automatic fork/join."""

from __future__ import annotations

__all__ = ["AUTO", "MANUAL"]

MANUAL = """
import torch
from npudsl import after, core_limit, keep_output, on_stream, records


class Block(torch.nn.Module):
    @on_stream("side", 1, sync="manual", when="self.multistream")
    @core_limit(8, 16, when="self.limit")
    @records("ready")
    @keep_output
    def produce(self, x):
        return x * 2

    @on_stream("late", sync="manual")
    @after("ready")
    @keep_output(clone=True)
    def consume(self, x, scale: float = 2.0):
        return x * scale

    @on_stream("default")
    @after("ready")
    def back(self, x):
        return x + 1

    def forward(self, x):
        y = self.produce(x)
        z = self.consume(y)
        return self.back(z)
"""

AUTO = """
import torch
from npudsl import keep_output, on_stream


@on_stream("shared")
@keep_output
class Shared(torch.nn.Module):
    def forward(self, x):
        return x * 2


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def forward(self, x):
        s = self.shared(x)
        y = x + 1
        return y + s
"""
