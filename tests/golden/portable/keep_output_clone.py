import torch
from npudsl import runtime
from torch import nn


class Head(nn.Module):
    def logits(self, x):
        out = x @ x.T
        out = runtime.clone(out)
        return out
