import torch
from torch import nn
import torchair


class Pipeline(nn.Module):
    def produce(self, x):
        out = x + 1
        self._event_ready = out
        return out

    def consume(self, y):
        with torchair.scope.npu_stream_switch("consumer", 0):
            y = torchair.scope.npu_wait_tensor(y, self._event_ready)
            return y.sum()
