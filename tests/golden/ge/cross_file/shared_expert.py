from contextlib import nullcontext

import torch
import torchair
from torch import nn


class SharedExpert(nn.Module):
    def __init__(self, hidden, multistream=True):
        super().__init__()
        self.multistream = multistream
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        with torchair.scope.npu_stream_switch("shared", 0) if self.multistream else nullcontext():
            return self.proj(x)
