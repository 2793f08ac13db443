"""This file never names npudsl; its call site is seen because the run sees both files."""

import torch
from npudsl import runtime
from torch import nn

from shared_expert import SharedExpert


class DecoderLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.shared = SharedExpert(hidden)
        self.routed = nn.Linear(hidden, hidden)

    def forward(self, x):
        if self.shared.multistream:
            runtime.record_stream(x, "shared")
        shared = self.shared(x, join=False)
        routed = self.routed(x)
        if self.shared.multistream:
            runtime.wait("shared_expert.SharedExpert.forward.join")
            runtime.record_stream(shared, runtime.current_stream())
        return shared + routed
