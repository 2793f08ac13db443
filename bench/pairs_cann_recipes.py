"""cann-recipes-infer's idioms written twice, with ``@on_stream`` and with every sync placed by hand
(``overlap_pairs.py``).

DeepSeek-V3.2's indexer, whose second side stream reads the first one's result (side stream to side stream), and the
layer prefetch, whose side stream's result is read in the next iteration of the layer loop.
"""

from __future__ import annotations

import torch
from torch import nn

from bench.pair_shapes import H, sample
from npudsl import on_stream, runtime

__all__ = ["IndexerAuto", "IndexerHand", "PrefetchAuto", "PrefetchHand", "indexer_inputs", "prefetch_inputs"]


def _linear(n_in: int = H, n_out: int = H) -> nn.Linear:
    """A layer built here, where the transformer sees that it is a plain ``nn.Linear``."""
    return nn.Linear(n_in, n_out, bias=False)


class _Indexer(nn.Module):
    """cann-recipes-infer's DeepSeek-V3.2 indexer: query and head weights on two side streams, keys on main;
    the head-weight branch reads the query branch's scale (side stream to side stream)."""

    def __init__(self) -> None:
        super().__init__()
        self.wq, self.wk, self.w_heads = _linear(H, 2 * H), _linear(H, 2 * H), _linear(H, 2 * H)


class IndexerAuto(_Indexer):
    @on_stream("indexer_prolog")
    def query(self, qr: torch.Tensor) -> torch.Tensor:
        return self.wq(qr).tanh()

    @on_stream("indexer_weight")
    def head_weights(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return self.w_heads(x) * scale

    def forward(self, x: torch.Tensor, qr: torch.Tensor) -> torch.Tensor:
        q = self.query(qr)
        weights = self.head_weights(x, q)
        k = self.wk(x).relu()
        score = (q * k).sum(-1)
        return score + weights.sum(-1)


class IndexerHand(_Indexer):
    def forward(self, x: torch.Tensor, qr: torch.Tensor) -> torch.Tensor:
        runtime.record("indexer.fork")
        with runtime.stream("indexer_prolog", 0):
            runtime.wait("indexer.fork")
            runtime.record_stream(qr, "indexer_prolog")
            q = self.wq(qr).tanh()
            runtime.record("indexer.q")
        with runtime.stream("indexer_weight", 0):
            runtime.wait("indexer.q")
            runtime.record_stream(x, "indexer_weight")
            runtime.record_stream(q, "indexer_weight")
            weights = self.w_heads(x) * q
            runtime.record("indexer.weights")
        k = self.wk(x).relu()
        runtime.wait("indexer.q")
        runtime.record_stream(q, "default")
        score = (q * k).sum(-1)
        runtime.wait("indexer.weights")
        runtime.record_stream(weights, "default")
        return score + weights.sum(-1)


class _Prefetch(nn.Module):
    """cann-recipes-infer's layer prefetch: the next layer's input transform on a side stream, read in the
    next iteration of the layer loop."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(_linear() for _ in range(4))
        self.pre = _linear()


class PrefetchAuto(_Prefetch):
    @on_stream("prefetch")
    def prefetch(self, h: torch.Tensor) -> torch.Tensor:
        return self.pre(h).sigmoid()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ahead = self.prefetch(x)
        for layer in self.layers:
            x = layer(x).relu()
            x = x * ahead
            ahead = self.prefetch(x)
        return x + ahead


class PrefetchHand(_Prefetch):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ahead = self._ahead(x)
        for layer in self.layers:
            x = layer(x).relu()
            runtime.wait("prefetch.join")
            runtime.record_stream(ahead, "default")
            x = x * ahead
            ahead = self._ahead(x)
        runtime.wait("prefetch.join")
        runtime.record_stream(ahead, "default")
        return x + ahead

    def _ahead(self, h: torch.Tensor) -> torch.Tensor:
        runtime.record("prefetch.fork")
        with runtime.stream("prefetch", 0):
            runtime.wait("prefetch.fork")
            runtime.record_stream(h, "prefetch")
            out = self.pre(h).sigmoid()
            runtime.record("prefetch.join")
        return out


def indexer_inputs() -> tuple[torch.Tensor, ...]:
    return sample(), sample(2)


def prefetch_inputs() -> tuple[torch.Tensor, ...]:
    return (sample(),)
