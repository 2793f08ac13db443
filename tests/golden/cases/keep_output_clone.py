import torch
from torch import nn

from npudsl import keep_output


class Head(nn.Module):
    @keep_output(clone=True)
    def logits(self, x):
        return x @ x.T
