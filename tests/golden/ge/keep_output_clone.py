import torch
from torch import nn


class Head(nn.Module):
    def logits(self, x):
        out = x @ x.T
        out = out.clone()
        return out
