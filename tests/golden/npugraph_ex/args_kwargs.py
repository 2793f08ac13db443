import torch
from torch import nn


class Flexible(nn.Module):
    def run(self, *args, scale=1.0, **kwargs):
        with torch.npu.npugraph_ex.scope.limit_core_num(4, 8):
            total = sum(args)
            return total * scale + kwargs.get("bias", 0)
