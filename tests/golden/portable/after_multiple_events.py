import torch
from torch import nn
from npudsl import runtime


class Fan(nn.Module):
    def left(self, x):
        with runtime.stream("a", 0):
            out = x * 2
            runtime.record("after_multiple_events.Fan.left_done")
            return out

    def right(self, x):
        with runtime.stream("b", 0):
            out = x * 3
            runtime.record("after_multiple_events.Fan.right_done")
            return out

    def merge(self, left, right):
        runtime.wait("after_multiple_events.Fan.left_done")
        runtime.wait("after_multiple_events.Fan.right_done")
        out = left + right
        runtime.record("after_multiple_events.Fan.both_read")
        runtime.record("after_multiple_events.Fan.merged")
        return out
