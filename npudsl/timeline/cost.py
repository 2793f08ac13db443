"""Op costs: FLOPs from the shapes dynamo recorded, or times measured by running the graph once."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.fx

__all__ = ["flop_cost", "measured_cost", "name_of"]

_CONTRACTING = {"linear", "mm", "bmm", "matmul", "addmm", "baddbmm", "conv1d", "conv2d"}
_FREE = {"getitem", "chunk", "split", "view", "reshape", "transpose", "permute", "unsqueeze", "squeeze",
         "expand", "contiguous", "size", "t", "flatten", "unflatten", "detach"}


def _shape(value: Any) -> tuple[int, ...] | None:
    return tuple(int(d) for d in value.shape) if isinstance(value, torch.Tensor) else None


def _value(node: Any) -> Any:
    return node.meta.get("example_value", node.meta.get("val")) if isinstance(node, torch.fx.Node) else None


def name_of(node: torch.fx.Node) -> str:
    """A short name for the op a node runs (``linear``, ``softmax``...)."""
    target = node.target
    return target if isinstance(target, str) else getattr(target, "__name__", str(target)).split(".")[-1]


def _einsum_flops(node: torch.fx.Node) -> int:
    equation = str(node.args[0]).replace(" ", "")
    sizes: dict[str, int] = {}
    for letters, operand in zip(equation.split("->")[0].split(","), node.args[1:]):
        shape = _shape(_value(operand)) or ()
        sizes.update(zip(letters, shape))
    return 2 * math.prod(sizes.values())


def flop_cost(node: torch.fx.Node) -> float:
    """Matmul-like ops: 2*m*n*k; views: 0; anything else: the largest input or output element count."""
    name = name_of(node)
    if name in _FREE:
        return 0.0
    out = _shape(_value(node))
    if name == "einsum":
        return float(_einsum_flops(node))
    inputs = [s for a in node.args if (s := _shape(_value(a)))]
    if name in _CONTRACTING and out and inputs:
        return 2.0 * math.prod(out) * inputs[0][-1]
    return float(max([math.prod(s) for s in (*inputs, *([out] if out else []))], default=1))


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
