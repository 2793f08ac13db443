"""A two-branch attention indexer: the key branch and the query-weight branch read the same input."""

import torch
from torch import nn


class Indexer(nn.Module):
    def __init__(self, hidden: int = 64, heads: int = 4, dim: int = 32) -> None:
        super().__init__()
        self.heads, self.dim = heads, dim
        self.wq = nn.Linear(hidden, heads * dim, bias=False)
        self.wk = nn.Linear(hidden, dim, bias=False)
        self.k_norm = nn.LayerNorm(dim)
        self.weights = nn.Linear(hidden, heads, bias=False)

    def keys(self, x):
        return self.k_norm(self.wk(x))

    def queries(self, x):
        q = self.wq(x).view(x.shape[0], self.heads, self.dim)
        return q * self.weights(x).softmax(dim=-1).unsqueeze(-1)

    def forward(self, x):
        k = self.keys(x)
        q = self.queries(x)
        return torch.einsum("thd,sd->ts", q, k)


def example_inputs():
    return (torch.randn(32, 64, generator=torch.Generator().manual_seed(0)),)
