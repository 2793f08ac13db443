"""omni-infer's pipelined decode written twice, with ``@on_stream`` and with every sync placed by hand
(``overlap_pairs.py``): two calls on one side stream, each result read at a different point of the caller.
"""

from __future__ import annotations

import torch
from torch import nn

from bench.pair_shapes import H, sample
from npudsl import on_stream, runtime

__all__ = ["ChunksAuto", "ChunksHand", "chunks_inputs"]


def _linear(n_in: int = H, n_out: int = H) -> nn.Linear:
    """A layer built here, where the transformer sees that it is a plain ``nn.Linear``."""
    return nn.Linear(n_in, n_out, bias=False)


class _Chunks(nn.Module):
    """omni-infer's pipelined decode: two calls on one side stream, each result read at a different point."""

    def __init__(self) -> None:
        super().__init__()
        self.comm, self.mid, self.tail = _linear(), _linear(H, 4 * H), _linear(4 * H, H)


class ChunksAuto(_Chunks):
    @on_stream("comm")
    def send(self, x: torch.Tensor) -> torch.Tensor:
        return self.comm(x).tanh()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = self.send(x)
        b = self.send(y)
        h = self.tail(self.mid(x).relu())
        h = h + a
        h = self.tail(self.mid(h).relu())
        return h + b


class ChunksHand(_Chunks):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        runtime.record("chunks.fork")
        with runtime.stream("comm", 0):
            runtime.wait("chunks.fork")
            runtime.record_stream(x, "comm")
            runtime.record_stream(y, "comm")
            a = self.comm(x).tanh()
            runtime.record("chunks.a")
            b = self.comm(y).tanh()
            runtime.record("chunks.b")
        h = self.tail(self.mid(x).relu())
        runtime.wait("chunks.a")
        runtime.record_stream(a, "default")
        h = h + a
        h = self.tail(self.mid(h).relu())
        runtime.wait("chunks.b")
        runtime.record_stream(b, "default")
        return h + b


def chunks_inputs() -> tuple[torch.Tensor, ...]:
    return sample(), sample(2)
