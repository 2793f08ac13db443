"""GE's data edges between streams, as the stand-in lowering adds them for target ``ge``.

GE plans the graph's memory and orders its data edges itself: a value read on
another stream than the one that made it is kept for the reader and, unless
the check asks for ``data_edges="explicit"``, ordered after its producer. This
pass adds both to a lowered graph, once per producer and reading stream.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import torch.fx

from npudsl.race._access import Access, accesses

if TYPE_CHECKING:
    from npudsl.testing.standins._lower import Lowering

__all__ = ["sync_data_edges"]


def _cross_stream_pairs(walk: Lowering) -> Iterator[tuple[torch.fx.Node, torch.fx.Node, torch.fx.Node, bool]]:
    """(earlier, later, memory, later reads) for each two accesses of one memory on two streams, one a write.

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
                yield earlier.node, access.node, access.memory, not access.write
        seen.setdefault(access.memory, []).append(access)


def sync_data_edges(walk: Lowering, order: bool) -> None:
    """What GE does for a data edge between streams: keep the tensor for the reader and (``order``) order it."""
    synced: set[tuple[torch.fx.Node, str]] = set()
    kept: set[tuple[torch.fx.Node, str]] = set()
    for earlier, node, memory, reads in list(_cross_stream_pairs(walk)):
        reader = walk.stream_of[node]
        with walk.graph.inserting_before(node):
            if order and (earlier, reader) not in synced:
                synced.add((earlier, reader))
                walk.emit("event_wait", (walk.record_after(earlier),), node)
            if reads and memory.op not in ("placeholder", "get_attr") and (memory, reader) not in kept:
                kept.add((memory, reader))
                walk.emit("record_stream", (memory, reader), node)
