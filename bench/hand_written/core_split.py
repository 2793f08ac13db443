"""The core-split example by hand: the side branch reads only the input.

The main stream waits for the side branch once, right before the sum that reads
its result; nothing is allocated on the side stream afterwards, so its result
needs no ``record_stream``. When a caller makes ``x`` (``bench.sync_premise``), the
side stream must wait for it (a fork) and keep it alive: the main stream drops it
after ``main_proj`` and allocates again (``tanh``) before it waits for the side.
As graph input, ``x`` is ready everywhere and alive throughout: neither is needed.
"""

from __future__ import annotations

import torch
from torch import nn

from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "example:core_split"
USER_EVENTS = ()


class Hand(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x):
        if from_caller():
            runtime.record("fork")
        with runtime.stream("side"), runtime.core_limit(8, 16):
            if from_caller():
                runtime.wait("fork")
                runtime.record_stream(x, "side")
            side = torch.relu(self.model.side_proj(x))
            runtime.record("side_done")
        with runtime.core_limit(16, 32):
            main = torch.tanh(self.model.main_proj(x))
        runtime.wait("side_done")
        return main + side
