import torch
from torch import nn
import torchair


class Fan(nn.Module):
    def left(self, x):
        with torchair.scope.npu_stream_switch("a", 0):
            out = x * 2
            self._event_left_done = out
            return out

    def right(self, x):
        with torchair.scope.npu_stream_switch("b", 0):
            out = x * 3
            self._event_right_done = out
            return out

    def merge(self, left, right):
        left = torchair.scope.npu_wait_tensor(left, self._event_left_done)
        right = torchair.scope.npu_wait_tensor(right, self._event_left_done)
        left = torchair.scope.npu_wait_tensor(left, self._event_right_done)
        right = torchair.scope.npu_wait_tensor(right, self._event_right_done)
        out = left + right
        self._event_both_read = out
        self._event_merged = out
        return out
