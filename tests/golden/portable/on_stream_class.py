import torch
from torch import nn
from npudsl import runtime


class Expert(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        runtime.record("on_stream_class.Expert.forward.fork")
        with runtime.stream("expert", 0):
            runtime.wait("on_stream_class.Expert.forward.fork")
            runtime.record_stream(x, "expert")
            out = self.proj(x)
            runtime.record("on_stream_class.Expert.forward.join")
            return out


class Layer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.expert = Expert(hidden)
        self.main = nn.Linear(hidden, hidden)

    def forward(self, x):
        side = self.expert(x)
        main = self.main(x)
        runtime.wait("on_stream_class.Expert.forward.join")
        return main + side
