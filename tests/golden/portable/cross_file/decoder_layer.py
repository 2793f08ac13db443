"""This file never names npudsl; its call site is seen because the run sees both files."""

from contextlib import nullcontext

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
            runtime.record("shared_expert.SharedExpert.forward.fork")
        with runtime.stream("shared", 0) if self.shared.multistream else nullcontext():
            if self.shared.multistream:
                runtime.wait("shared_expert.SharedExpert.forward.fork")
                runtime.record_stream(x, "shared")
            shared = self.shared(x)
            if self.shared.multistream:
                runtime.record("shared_expert.SharedExpert.forward.join")
        routed = self.routed(x)
        if self.shared.multistream:
            runtime.wait("shared_expert.SharedExpert.forward.join")
        return shared + routed
