"""The same math twice: with ``@on_stream`` and automatic sync, and with every sync placed by hand.

Each pair is a real engine idiom. The hand-written side is what an expert writes with the
``npudsl.runtime`` calls (the portable target's vocabulary): fork right at the call, join right
before the first read of the result, ``record_stream`` on every tensor that crosses streams.
``bench/overlap_kept.py`` captures both, simulates them on the cost model of ``npudsl schedule``
and prints the saving each keeps.
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import on_stream, runtime

H = 512  # hidden size: big enough that matmuls dominate the cost model
T = 64  # tokens


def _linear(n_in: int = H, n_out: int = H) -> nn.Linear:
    return nn.Linear(n_in, n_out, bias=False)


class _Moe(nn.Module):
    """vllm-ascend's MoE with a shared expert: gate and routed experts on main, the shared expert beside."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.routed = _linear(H, 8), _linear(H, 4 * H)
        self.up, self.down = _linear(H, 4 * H), _linear(4 * H, H)


class MoeAuto(_Moe):
    @on_stream("shared_expert")
    def shared_expert(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = self.gate(x).softmax(-1)
        shared = self.shared_expert(x)
        routed = self.down(torch.relu(self.routed(x))) * weights[:, :1]
        return routed + shared


class MoeHand(_Moe):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = self.gate(x).softmax(-1)
        runtime.record("moe.fork")
        with runtime.stream("shared_expert", 0):
            runtime.wait("moe.fork")
            runtime.record_stream(x, "shared_expert")
            shared = self.down(torch.relu(self.up(x)))
            runtime.record("moe.join")
        routed = self.down(torch.relu(self.routed(x))) * weights[:, :1]
        runtime.wait("moe.join")
        runtime.record_stream(shared, "default")
        return routed + shared


class _Mla(nn.Module):
    """vllm-ascend's MLA: the KV branch (projection, norm, cache write) beside the query projection."""

    def __init__(self) -> None:
        super().__init__()
        self.kv, self.q_a, self.q_b, self.o = _linear(), _linear(H, 2 * H), _linear(2 * H, H), _linear()


class MlaAuto(_Mla):
    @on_stream("mla_secondary")
    def exec_kv(self, x: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
        kv = torch.nn.functional.layer_norm(self.kv(x), (H,))
        cache.copy_(kv)
        return kv

    def forward(self, x: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
        kv = self.exec_kv(x, cache)
        q = self.q_b(torch.relu(self.q_a(x)))
        return self.o(q * cache + kv)


class MlaHand(_Mla):
    def forward(self, x: torch.Tensor, cache: torch.Tensor) -> torch.Tensor:
        runtime.record("mla.fork")
        with runtime.stream("mla_secondary", 0):
            runtime.wait("mla.fork")
            runtime.record_stream(x, "mla_secondary")
            kv = torch.nn.functional.layer_norm(self.kv(x), (H,))
            cache.copy_(kv)
            runtime.record("mla.join")
        q = self.q_b(torch.relu(self.q_a(x)))
        runtime.wait("mla.join")
        runtime.record_stream(kv, "default")
        return self.o(q * cache + kv)


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


class _Optional(nn.Module):
    """vllm-ascend's ``if self.shared_experts is not None``: a fork on some paths only."""

    def __init__(self, shared: bool = True) -> None:
        super().__init__()
        self.use_shared = shared
        self.up, self.down, self.main = _linear(H, 4 * H), _linear(4 * H, H), _linear(H, 4 * H)


class OptionalAuto(_Optional):
    @on_stream("shared_expert")
    def shared_expert(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.up(x).relu())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shared = None
        if self.use_shared:
            shared = self.shared_expert(x)
        out = self.down(self.main(x).relu())
        if shared is not None:
            out = out + shared
        return out


class OptionalHand(_Optional):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shared = None
        if self.use_shared:
            runtime.record("optional.fork")
            with runtime.stream("shared_expert", 0):
                runtime.wait("optional.fork")
                runtime.record_stream(x, "shared_expert")
                shared = self.down(self.up(x).relu())
                runtime.record("optional.join")
        out = self.down(self.main(x).relu())
        if shared is not None:
            runtime.wait("optional.join")
            runtime.record_stream(shared, "default")
            out = out + shared
        return out


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


def _x(seed: int = 1) -> torch.Tensor:
    return torch.randn(T, H, generator=torch.Generator().manual_seed(seed))


def moe_inputs() -> tuple[torch.Tensor, ...]:
    return (_x(),)


def mla_inputs() -> tuple[torch.Tensor, ...]:
    return _x(), torch.zeros(T, H)


def indexer_inputs() -> tuple[torch.Tensor, ...]:
    return _x(), _x(2)


def chunks_inputs() -> tuple[torch.Tensor, ...]:
    return _x(), _x(2)


# name: (automatic class, hand-written class, inputs function), all in this file
PAIRS = {
    "moe_shared_expert": ("MoeAuto", "MoeHand", "moe_inputs"),
    "mla_kv_branch": ("MlaAuto", "MlaHand", "mla_inputs"),
    "indexer_two_streams": ("IndexerAuto", "IndexerHand", "indexer_inputs"),
    "layer_prefetch_loop": ("PrefetchAuto", "PrefetchHand", "moe_inputs"),
    "optional_shared_expert": ("OptionalAuto", "OptionalHand", "moe_inputs"),
    "two_results_one_stream": ("ChunksAuto", "ChunksHand", "chunks_inputs"),
}
