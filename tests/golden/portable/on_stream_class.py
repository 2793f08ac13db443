import torch
from npudsl import runtime
from torch import nn


class Expert(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, *, join=True):
        caller_stream = runtime.current_stream()
        runtime.record("on_stream_class.Expert.forward.fork")
        with runtime.stream("expert", 0):
            runtime.wait("on_stream_class.Expert.forward.fork")
            if join:
                runtime.record_stream(x, "expert")
            out = self.proj(x)
            if join:
                runtime.record_stream(out, caller_stream)
            runtime.record("on_stream_class.Expert.forward.join")
        if join:
            runtime.wait("on_stream_class.Expert.forward.join")
        return out


class Layer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.expert = Expert(hidden)
        self.main = nn.Linear(hidden, hidden)

    def forward(self, x):
        runtime.record_stream(x, "expert")
        side = self.expert(x, join=False)
        main = self.main(x)
        runtime.wait("on_stream_class.Expert.forward.join")
        runtime.record_stream(side, runtime.current_stream())
        return main + side
