import torch
from torch import nn

from npudsl import keep_output, on_stream


@on_stream("shared", when="self.multistream")
@keep_output
class SharedExpert(nn.Module):
    def __init__(self, hidden, multistream=True):
        super().__init__()
        self.multistream = multistream
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        return self.proj(x)
