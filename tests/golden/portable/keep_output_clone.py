import torch
from torch import nn
from npudsl import runtime


class Head(nn.Module):
    def logits(self, x):
        out = x @ x.T
        out = runtime.clone(out)
        return out
