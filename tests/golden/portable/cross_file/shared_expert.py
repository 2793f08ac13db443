from contextlib import nullcontext

import torch
from npudsl import runtime
from torch import nn


class SharedExpert(nn.Module):
    def __init__(self, hidden, multistream=True):
        super().__init__()
        self.multistream = multistream
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        if self.multistream:
            runtime.record("shared_expert.SharedExpert.forward.fork")
        with runtime.stream("shared", 0) if self.multistream else nullcontext():
            if self.multistream:
                runtime.wait("shared_expert.SharedExpert.forward.fork")
                if join:
                    runtime.record_stream(x, "shared")
            out = self.proj(x)
            if self.multistream:
                if join:
                    runtime.record_stream(out, caller_stream)
                runtime.record("shared_expert.SharedExpert.forward.join")
        if self.multistream and join:
            runtime.wait("shared_expert.SharedExpert.forward.join")
        return out
