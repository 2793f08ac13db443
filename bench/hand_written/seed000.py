"""Seed 000 by hand: the user's two events, one block per side stream, nothing else.

``matmul`` and ``side_sum`` both run on stream "1" back to back, so they share one
block. Every tensor read off the main stream is a graph input (ready everywhere),
and what the side streams make is returned, never read by another stream: no join
and no ``record_stream`` is needed (``b`` is made, used and dropped on stream "1").
When a caller makes the inputs (``bench.sync_premise``), the user's events already
order them, but neither side stream is joined when the forward returns: the caller
drops ``in3`` and ``in4`` and allocates again while "1" and "2" may still read
them, so each side stream keeps both.
"""

from __future__ import annotations

import torch
from torch import nn

from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "example:seed000"
USER_EVENTS = ("add_done", "mm_done")


class Hand(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()

    def forward(self, in1, in2, in3, in4):
        add_result = torch.add(in1, in2)
        runtime.record("add_done")
        with runtime.stream("1"):
            runtime.wait("add_done")
            if from_caller():
                runtime.record_stream((in3, in4), "1")
            mm_result = torch.mm(in3, in4)
            runtime.record("mm_done")
            b = in3 + in4
        mm1 = torch.mm(in3, in4)
        del b
        c = torch.ones(in3.shape[0], in4.shape[1], dtype=in3.dtype, device=in3.device)
        c.add_(2)
        with runtime.stream("2"):
            runtime.wait("mm_done")
            if from_caller():
                runtime.record_stream((in3, in4), "2")
            add2 = torch.add(in3, in4)
        return add_result, mm_result, mm1, add2, c
