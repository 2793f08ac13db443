"""The core-split example by hand: the side branch reads only the input, so it needs no fork.

The main stream waits for the side branch once, right before the sum that reads
its result; nothing is allocated on the side stream afterwards, so its result
needs no ``record_stream``.
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import runtime

SOURCE = "example:core_split"
USER_EVENTS = ()


class Hand(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x):
        with runtime.stream("side"), runtime.core_limit(8, 16):
            side = torch.relu(self.model.side_proj(x))
            runtime.record("side_done")
        with runtime.core_limit(16, 32):
            main = torch.tanh(self.model.main_proj(x))
        runtime.wait("side_done")
        return main + side
