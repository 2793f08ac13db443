"""What an op of the captured graph does that forbids moving it past another: memory, random numbers, collectives.

- Memory: the allocations it reads and writes, through views, ``.data`` and
  in-place results, as the ATen schemas of the ops it runs say
  (:mod:`npudsl.race._alias`, the race checker's own rule: ``x += y``, ``out=``,
  ``inplace=True`` and batch-norm running statistics included). Two groups of ops may change order only when neither
  uses a value the other makes and neither writes memory the other reads or writes.
- Random numbers: a node that runs an ATen op tagged ``nondeterministic_seeded``
  (``randn``, ``dropout`` in training, ``normal_``...), or a submodule call the graph does not open.
  Reordering two such draws, or moving one, changes the numbers.
- Collectives: every rank must issue them in the same order.
- State outside tensors: an op that returns nothing and writes no tensor
  (``torch.set_default_dtype``) acts on something no data dependence shows.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.fx

from npudsl.race._alias import effect, is_tensor, root, writes
from npudsl.race._timeline import runtime_op
from npudsl.timeline.cost import name_of

__all__ = ["collective", "conflict", "dependence", "foreign_writes", "opaque", "random"]

_COLLECTIVES = frozenset(
    {
        "all_reduce",
        "all_reduce_",
        "all_reduce_coalesced",
        "all_gather",
        "all_gather_into_tensor",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "all_to_all",
        "all_to_all_single",
        "broadcast",
        "broadcast_",
        "barrier",
        "send",
        "recv",
        "isend",
        "irecv",
        "wait_tensor",
    }
)


def _touches(node: torch.fx.Node) -> tuple[set[torch.fx.Node], set[torch.fx.Node]]:
    """The allocations ``node`` reads, and those it writes (in place, or the new tensor it makes)."""
    if runtime_op(node) is not None:
        return set(), set()
    found = effect(node)
    reads = {root(a) for a in found.reads if is_tensor(a)}
    made = {node} if is_tensor(node) and found.aliases is None else set()
    return reads, {root(t) for t in found.writes} | made


def conflict(first: Iterable[torch.fx.Node], second: Iterable[torch.fx.Node]) -> bool:
    """Whether the ops ``first`` and ``second`` depend on each other, by value or through memory."""
    return dependence(first, second) is not None


def dependence(call: Iterable[torch.fx.Node], other: Iterable[torch.fx.Node]) -> str | None:
    """How the ops ``other`` depend on the ops ``call`` (said of ``other``), or ``None`` when they do not."""
    a, b = set(call), set(other)
    if any(set(n.all_input_nodes) & b for n in a):
        return "makes a value the call uses"
    if any(set(n.all_input_nodes) & a for n in b):
        return "uses a value the call makes"
    read_a, write_a = _union(a)
    read_b, write_b = _union(b)
    if write_b & read_a:
        return "writes memory the call reads (in place, through a view, .data or a module)"
    if write_b & write_a:
        return "writes memory the call writes"
    return "reads memory the call writes in place" if write_a & read_b else None


def _union(nodes: set[torch.fx.Node]) -> tuple[set[torch.fx.Node], set[torch.fx.Node]]:
    reads: set[torch.fx.Node] = set()
    writes: set[torch.fx.Node] = set()
    for node in nodes:
        read, write = _touches(node)
        reads |= read
        writes |= write
    return reads, writes


def foreign_writes(nodes: Iterable[torch.fx.Node]) -> bool:
    """Whether ``nodes`` write in place memory that none of them made."""
    own = set(nodes)
    return any(root(t) not in own for node in own for t in writes(node))


def random(node: torch.fx.Node) -> bool:
    """Whether ``node`` draws random numbers (an ATen op tagged ``nondeterministic_seeded`` runs in it, or it is a
    submodule call the graph does not open)."""
    return node.op == "call_module" or effect(node).random


def opaque(node: torch.fx.Node) -> bool:
    """An op the graph keeps only for what it does outside tensors (``torch.set_default_dtype``...): nothing uses
    its result, dynamo recorded no value for it, and it writes no tensor; no data dependence shows its effect."""
    kept = node.op in ("call_function", "call_method") and runtime_op(node) is None and not node.users
    return kept and node.meta.get("example_value", node.meta.get("val")) is None and not writes(node)


def collective(node: torch.fx.Node) -> bool:
    return name_of(node) in _COLLECTIVES or "c10d" in str(node.target)
