"""What an op of the captured graph does that forbids moving it past another: memory, random numbers, collectives.

- Memory: the allocations it reads and writes, through views and in-place
  results (:mod:`npudsl.race._alias`, the race checker's own rule, ``x += y`` on
  a tensor included). Two groups of ops may change order only when neither
  uses a value the other makes and neither writes memory the other reads or writes.
- Random numbers: an op tagged ``nondeterministic_seeded`` in ATen (``randn``,
  ``dropout``, ``normal_``...), or a submodule call the graph does not open.
  Reordering two such draws, or moving one, changes the numbers.
- Collectives: every rank must issue them in the same order.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import torch
import torch.fx

from npudsl.race._alias import is_maybe_view, is_metadata, is_tensor, is_view, root, written
from npudsl.race._timeline import runtime_op
from npudsl.timeline.cost import name_of

__all__ = ["collective", "conflict", "foreign_writes", "random"]

_COLLECTIVES = frozenset({"all_reduce", "all_reduce_", "all_reduce_coalesced", "all_gather", "all_gather_into_tensor",
                          "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "broadcast",
                          "broadcast_", "barrier", "send", "recv", "isend", "irecv", "wait_tensor"})


def _touches(node: torch.fx.Node) -> tuple[set[torch.fx.Node], set[torch.fx.Node]]:
    """The allocations ``node`` reads, and those it writes (in place, or the new tensor it makes)."""
    if runtime_op(node) is not None or is_view(node) or is_metadata(node):
        return set(), set()
    target = written(node)
    reads = {root(a) for a in node.all_input_nodes if a is not target and is_tensor(a)}
    if target is not None:
        return reads, {root(target)}
    return reads, ({node} if is_tensor(node) and not is_maybe_view(node) else set())


def conflict(first: Iterable[torch.fx.Node], second: Iterable[torch.fx.Node]) -> bool:
    """Whether the ops ``first`` and ``second`` depend on each other, by value or through memory."""
    a, b = set(first), set(second)
    if any(set(n.all_input_nodes) & b for n in a) or any(set(n.all_input_nodes) & a for n in b):
        return True
    read_a, write_a = _union(a)
    read_b, write_b = _union(b)
    return bool(write_a & (read_b | write_b) or write_b & read_a)


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
    return any(t is not None and root(t) not in own for t in map(written, own))


@functools.cache
def _seeded(name: str) -> bool:
    try:
        packet = getattr(torch.ops.aten, name)
    except (AttributeError, RuntimeError):
        return False
    return any(torch.Tag.nondeterministic_seeded in getattr(packet, o).tags for o in packet.overloads())


def random(node: torch.fx.Node) -> bool:
    """Whether ``node`` draws random numbers (a submodule call the graph does not open counts)."""
    if node.op == "call_module":
        return True
    if isinstance(node.target, torch._ops.OpOverload):
        return torch.Tag.nondeterministic_seeded in node.target.tags
    name = name_of(node)
    return _seeded(name) or (name.endswith("_") and _seeded(name[:-1]))


def collective(node: torch.fx.Node) -> bool:
    return name_of(node) in _COLLECTIVES or "c10d" in str(node.target)
