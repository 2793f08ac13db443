"""Op durations in microseconds: a cost model from the shapes dynamo recorded, or times measured on this CPU.

The cost model prices each op on a stated nominal device (:class:`Hardware`):

- matmul-like ops (``linear``, ``mm``, ``bmm``, ``matmul``, ``einsum``...): ``2*m*n*k``
  FLOPs at ``flops`` per second;
- collectives (``all_reduce``, ``all_gather``, ``reduce_scatter``, ``all_to_all``,
  ``broadcast``...): the bytes each rank sends over one link of ``link_bandwidth``
  bytes per second; an all-reduce sends its tensor twice (a ring all-reduce sends
  ``2*(n-1)/n`` of it, close to 2 for many ranks), the others once;
- views and waits: free;
- anything else: the bytes it reads and writes at ``memory_bandwidth``.

There is no launch overhead (a captured graph replays without host launches) and
no contention between streams: the figures predict the overlap, not the speed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import attrs
import torch
import torch.fx

__all__ = ["NOMINAL", "Hardware", "measured_cost", "model_cost", "name_of"]

_CONTRACTING = {"linear", "mm", "bmm", "matmul", "addmm", "baddbmm", "conv1d", "conv2d"}
_FREE = {
    "getitem",
    "chunk",
    "split",
    "view",
    "reshape",
    "transpose",
    "permute",
    "unsqueeze",
    "squeeze",
    "expand",
    "contiguous",
    "size",
    "t",
    "flatten",
    "unflatten",
    "detach",
    "wait_tensor",
}
_COLLECTIVE_FACTOR = {
    "all_reduce": 2.0,
    "all_reduce_": 2.0,
    "all_reduce_coalesced": 2.0,
    "all_gather_into_tensor": 1.0,
    "all_gather": 1.0,
    "reduce_scatter_tensor": 1.0,
    "reduce_scatter": 1.0,
    "all_to_all_single": 1.0,
    "all_to_all": 1.0,
    "broadcast": 1.0,
    "broadcast_": 1.0,
}


@attrs.frozen(kw_only=True)
class Hardware:
    """The nominal device the cost model prices ops on (assumed figures, not measurements)."""

    flops: float = attrs.field(default=256e12, validator=attrs.validators.gt(0))  # FLOP/s, matmul-like ops
    memory_bandwidth: float = attrs.field(default=1.6e12, validator=attrs.validators.gt(0))  # bytes/s
    link_bandwidth: float = attrs.field(default=50e9, validator=attrs.validators.gt(0))  # bytes/s, per link

    def describe(self) -> str:
        return (
            f"cost model: matmul-like ops at {self.flops / 1e12:g} TFLOP/s, other ops by bytes at "
            f"{self.memory_bandwidth / 1e12:g} TB/s, collectives by bytes over a "
            f"{self.link_bandwidth / 1e9:g} GB/s link"
        )


NOMINAL = Hardware()


def _value(node: Any) -> Any:
    return node.meta.get("example_value", node.meta.get("val")) if isinstance(node, torch.fx.Node) else None


def _tensors(node: torch.fx.Node) -> list[torch.Tensor]:
    values = [_value(a) for a in node.args] + [_value(node)]
    return [v for v in values if isinstance(v, torch.Tensor)]


def _bytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def name_of(node: torch.fx.Node) -> str:
    """A short name for the op a node runs (``linear``, ``softmax``...)."""
    target = node.target
    return target if isinstance(target, str) else getattr(target, "__name__", str(target)).split(".")[-1]


def _flops(node: torch.fx.Node, name: str) -> float | None:
    out = _value(node)
    if name == "einsum":
        equation = str(node.args[0]).replace(" ", "")
        sizes: dict[str, int] = {}
        for letters, operand in zip(equation.split("->")[0].split(","), node.args[1:]):
            value = _value(operand)
            sizes.update(zip(letters, value.shape if isinstance(value, torch.Tensor) else ()))
        return 2.0 * math.prod(sizes.values())
    first = next((v for a in node.args if isinstance(v := _value(a), torch.Tensor)), None)
    if name in _CONTRACTING and isinstance(out, torch.Tensor) and first is not None and first.dim():
        return 2.0 * out.numel() * first.shape[-1]
    return None


def model_cost(device: Hardware = NOMINAL) -> Callable[[torch.fx.Node], float]:
    """Each node's modelled duration in microseconds (see the module docstring)."""

    def cost(node: torch.fx.Node) -> float:
        name = name_of(node)
        if name in _FREE:
            return 0.0
        tensors = _tensors(node)
        if name in _COLLECTIVE_FACTOR:
            sent = max((_bytes(t) for t in tensors), default=0)
            return 1e6 * _COLLECTIVE_FACTOR[name] * sent / device.link_bandwidth
        flops = _flops(node, name)
        if flops is not None:
            return 1e6 * flops / device.flops
        return 1e6 * sum(_bytes(t) for t in tensors) / device.memory_bandwidth

    return cost


def measured_cost(gm: torch.fx.GraphModule, inputs: list[Any], repeat: int = 5) -> Callable[[torch.fx.Node], float]:
    """Each node's fastest eager time in microseconds over ``repeat`` runs of the graph (CPU: serial)."""
    best: dict[torch.fx.Node, float] = {}

    class _Timed(torch.fx.Interpreter):
        def run_node(self, n: torch.fx.Node) -> Any:
            start = time.perf_counter()
            result = super().run_node(n)
            best[n] = min(best.get(n, math.inf), (time.perf_counter() - start) * 1e6)
            return result

    with torch.no_grad():
        for _ in range(repeat):
            _Timed(gm).run(*inputs)
    return lambda node: 0.0 if name_of(node) in _FREE else best.get(node, 0.0)
