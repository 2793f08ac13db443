"""The model text shared by the tests of what stops ``suggest`` moving a call: a class with a batch norm, an
in-place activation and a buffer (``{extra}``: more of ``__init__``, then methods), and its example inputs."""

from __future__ import annotations

__all__ = ["model"]

_HEAD = """import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.BatchNorm1d(64)
        self.act = nn.ReLU(inplace=True)
        self.register_buffer("cache", torch.ones(64, 64))
"""
_INPUTS = """

def example_inputs():
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(64, 64, generator=g) for _ in range(2))
"""


def model(body: str) -> str:
    """A model file: the shared head, then ``body`` (the rest of the class, indented), then ``example_inputs``."""
    return _HEAD + body + _INPUTS
