import torch
from npudsl import runtime
from torch import nn


class Ordered(nn.Module):
    def start(self, x):
        out = x + 1
        runtime.record("stacking_order_a.Ordered.go")
        return out

    def work(self, x):
        with runtime.core_limit(4, 8):
            runtime.wait("stacking_order_a.Ordered.go")
            out = x * 2
            runtime.record("stacking_order_a.Ordered.done")
            return out

    def finish(self, y):
        runtime.wait("stacking_order_a.Ordered.done")
        return y - 1
