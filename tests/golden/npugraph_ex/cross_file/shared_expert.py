import torch
from torch import nn


class SharedExpert(nn.Module):
    def __init__(self, hidden, multistream=True):
        super().__init__()
        self.multistream = multistream
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        return self.proj(x)
