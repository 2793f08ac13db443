import torch
from torch import nn


class Early(nn.Module):
    def route(self, x, skip):
        if skip:
            return x
        for _ in range(2):
            if x.sum() > 0:
                return x * 2

        def helper(v):
            return v + 1  # a nested function's return is its own

        x = helper(x)
        return torch.relu(x)

    def log(self, x):
        print(x.shape)
