"""The all-reduce overlap example by hand: the user's two events are the whole ordering.

``grad`` is made on the main stream and written in place by the collective on
"comm" after ``grad_ready``; the main stream reads it again only after waiting
for ``reduced``, so no other sync call is needed: the main stream's later
allocations are ordered after the collective by that wait.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn

from npudsl import runtime

SOURCE = "example:distributed_overlap"
USER_EVENTS = ("grad_ready", "reduced")
WORLD = 2


class Hand(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x):
        grad = torch.tanh(x @ self.model.w_grad)
        runtime.record("grad_ready")
        with runtime.stream("comm"):
            runtime.wait("grad_ready")
            dist.all_reduce(grad)
            runtime.record("reduced")
        hidden = torch.relu(x @ self.model.w_next) @ self.model.w_next
        runtime.wait("reduced")
        return hidden + grad / WORLD
