"""Which nodes of a captured graph share memory, and which write it in place, by what their ops do.

Every answer comes from :func:`~npudsl.race._effects.effect`, that is from the
alias annotations of the ATen operators a node runs, never from its name:

- a *view* (``x.view(...)``, ``h.T``, ``x[..., :k]``, ``h.data``, ``getitem`` of a
  multi-output op...) reads nothing and stands for the memory of the argument it
  aliases, its *root*;
- a *write* (``x.add_(1)``, ``x[0] = v``, ``x += v``, ``out=``, ``F.relu(h, True)``,
  ``torch._foreach_add_``, batch-norm running statistics...) writes each argument
  in a ``Tensor(a!)`` slot, and its result (if any) aliases the first of them;
- a *metadata* query (``x.size()``) runs no op on the tensor's memory.

This is the one rule of "what an op writes": the race checker, the GE stand-in's
ordering and ``npudsl suggest`` all ask it.
"""

from __future__ import annotations

import torch
import torch.fx

from npudsl.race._effects import Effect, effect
from npudsl.race._meta import example

__all__ = ["Effect", "effect", "is_clone", "is_tensor", "root", "writes"]


def is_tensor(node: torch.fx.Node) -> bool:
    """The node's value is a tensor or holds tensors (unknown values count as tensors)."""
    value = example(node)
    if value is None:
        return node.op != "output"
    if isinstance(value, (tuple, list)):
        return any(isinstance(item, torch.Tensor) for item in value)
    return isinstance(value, torch.Tensor)


def is_clone(node: torch.fx.Node) -> bool:
    """``x.clone()`` / ``torch.clone(x)``: what ``@keep_output(clone=True)`` generates."""
    name = str(node.target) if node.op == "call_method" else getattr(node.target, "__name__", "")
    return node.op in ("call_function", "call_method") and name == "clone"


def writes(node: torch.fx.Node) -> tuple[torch.fx.Node, ...]:
    """The argument nodes whose memory ``node`` writes in place (empty: none)."""
    return effect(node).writes


def root(node: torch.fx.Node) -> torch.fx.Node:
    """The node that allocated the memory ``node`` stands for (through views and in-place results)."""
    while (base := effect(node).aliases) is not None:
        node = base
    return node
