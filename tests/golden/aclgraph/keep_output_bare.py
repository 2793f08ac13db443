import torch
from torch import nn
import torchair


class Producer(nn.Module):
    def pair(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            a = x + 1
            out = x * 2
            torchair.ops.npu_record_tagged_stream(a, "default")
            torchair.ops.npu_record_tagged_stream(out, "default")
            return a, out
