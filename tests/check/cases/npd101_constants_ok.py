"""Decorator arguments given as module-level names bound once to literals (CONTRACT section 1)."""

import torch
from torch import nn

from npudsl import core_limit, on_stream

STREAM_SHARED = "shared"
PRIORITY: int = 0
CUBE = 8
VECTOR = 16


class SharedBlock(nn.Module):
    @on_stream(STREAM_SHARED, PRIORITY)
    @core_limit(aicore=CUBE, vector=VECTOR)
    def shared(self, x):
        return torch.relu(x)

    @core_limit(16, 32)
    def forward(self, x):
        y = self.shared(x)
        return y + x
