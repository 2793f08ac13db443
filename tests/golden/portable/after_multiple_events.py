import torch
from npudsl import runtime
from torch import nn


class Fan(nn.Module):
    def left(self, x):
        out = x * 2
        runtime.record("after_multiple_events.Fan.left_done")
        return out

    def right(self, x):
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
