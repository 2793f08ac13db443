"""vllm-ascend's idioms written twice, with ``@on_stream`` and with every sync placed by hand (``overlap_pairs.py``).

The shared expert beside the routed experts, the MLA's KV branch beside the query projection, and the shared expert
forked on some paths only (``if self.shared_experts is not None``): each forks once and joins once.
"""

from __future__ import annotations

import torch
from torch import nn

from bench.pair_shapes import H, T, sample
from npudsl import on_stream, runtime

__all__ = ["MlaAuto", "MlaHand", "MoeAuto", "MoeHand", "OptionalAuto", "OptionalHand", "mla_inputs", "moe_inputs"]


def _linear(n_in: int = H, n_out: int = H) -> nn.Linear:
    """A layer built here, where the transformer sees that it is a plain ``nn.Linear``."""
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


def moe_inputs() -> tuple[torch.Tensor, ...]:
    return (sample(),)


def mla_inputs() -> tuple[torch.Tensor, ...]:
    return sample(), torch.zeros(T, H)
