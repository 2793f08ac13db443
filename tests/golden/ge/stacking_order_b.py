import torch
from torch import nn
import torchair


class Ordered(nn.Module):
    def start(self, x):
        out = x + 1
        self._event_go = out
        return out

    def work(self, x):
        with (
            torchair.scope.npu_stream_switch("s", 0),
            torchair.scope.limit_core_num(4, 8),
        ):
            x = torchair.scope.npu_wait_tensor(x, self._event_go)
            out = x * 2
            self._event_done = out
            return out

    def finish(self, y):
        y = torchair.scope.npu_wait_tensor(y, self._event_done)
        return y - 1
