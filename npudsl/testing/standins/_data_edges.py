"""GE's data edges between streams, as the stand-in lowering adds them for target ``ge``.

GE plans the graph's memory and orders its data edges itself: a value used on
another stream than the one that made it is kept for the user and, unless the
check asks for ``data_edges="explicit"``, ordered after its producer. This pass
adds both to a lowered graph, once per producer and using stream.

GE compiles the graph that aot_autograd's functionalization makes, where an in-place
write of an op's result (``scales.copy_(s)``) is a functional op that takes the old
value as an input and makes a new one (``copy = aten.copy(scales, s)``; a write whose
new value nothing reads is dropped with it). So a write on another stream is a use of
the old value like a read: GE keeps it for the writing stream as it keeps it for a
reader (``tests/targets/test_ge_kept_writes.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch.fx

from npudsl.race._access import Access, accesses

if TYPE_CHECKING:
    from npudsl.testing.standins._lower import Lowering

__all__ = ["sync_data_edges"]


def _cross_stream_pairs(walk: Lowering) -> Iterator[tuple[torch.fx.Node, torch.fx.Node, torch.fx.Node]]:
    """(earlier, later, memory) for each two accesses of one memory on two streams, one a write.

    GE's graph is functional: an in-place write makes a new value and every later use names it, so it
    orders a write before a later read (and a read before a later write) on any stream, as it does a
    producer before its readers. Graph inputs are written before everything and need nothing.
    """
    seen: dict[torch.fx.Node, list[Access]] = {}
    for access in accesses(walk.graph):
        stream = walk.stream_of.get(access.node)
        for earlier in seen.get(access.memory, []):
            made = walk.stream_of.get(earlier.node)
            if stream is None or made is None or made == stream or not (earlier.write or access.write):
                continue
            if earlier.node.op not in ("placeholder", "get_attr"):
                yield earlier.node, access.node, access.memory
        seen.setdefault(access.memory, []).append(access)


def sync_data_edges(walk: Lowering, order: bool) -> None:
    """What GE does for a data edge between streams: keep the tensor for its user and (``order``) order it.

    The user reads the value or writes it in place: either way its functional op takes the value as an input.
    """
    synced: set[tuple[torch.fx.Node, str]] = set()
    kept: set[tuple[torch.fx.Node, str]] = set()
    for earlier, node, memory in list(_cross_stream_pairs(walk)):
        user = walk.stream_of[node]
        with walk.graph.inserting_before(node):
            if order and (earlier, user) not in synced:
                synced.add((earlier, user))
                walk.emit("event_wait", (walk.record_after(earlier),), node)
            if memory.op not in ("placeholder", "get_attr") and (memory, user) not in kept:
                kept.add((memory, user))
                walk.emit("record_stream", (memory, user), node)
