"""A decode step with a side-stream branch, compiled by ``npudsl.compile`` in the stale-output tests (never edited).

``# P:logits`` marks the line that makes the step's output. ``ClonedStep`` is the
same step with ``@keep_output(clone=True)`` on the function that returns it.
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import keep_output, on_stream

__all__ = ["ClonedStep", "Step"]


class Step(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Linear(4, 4)
        self.head = nn.Linear(4, 4)

    @on_stream("side")
    def shared(self, h: torch.Tensor) -> torch.Tensor:
        return h.sin()

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        logits = self.head(h).tanh()  # P:logits
        return logits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        s = self.shared(h)
        return self.logits(h + s)


class ClonedStep(Step):
    @keep_output(clone=True)
    def logits(self, h: torch.Tensor) -> torch.Tensor:
        logits = self.head(h).tanh()
        return logits
