import torch
from torch import nn
import torchair


class Split(nn.Module):
    def halves(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            left, right = x.chunk(2)
            out = right.relu()
            out_1 = (left * 2)
            torchair.ops.npu_record_tagged_stream(left, "default")
            torchair.ops.npu_record_tagged_stream(out, "default")
            torchair.ops.npu_record_tagged_stream(out_1, "default")
            return left, out, out_1

    def packed(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            out = torch.split(x, 2)
            torchair.ops.npu_record_tagged_stream(out, "default")
            return out
