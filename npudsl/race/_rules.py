"""The free rule, checked on a :class:`~npudsl.race._timeline.Timeline`.

The graph drops a tensor after the last use of its memory (through any view or
in-place result), or never, when that memory reaches the graph output. If a tensor
made on stream A is read or written in place on stream B and not kept for B with
``record_stream(t, B)``, every such access must happen before the first op that
allocates on A after that last use, since the caching allocator hands the memory to
A's next allocation as soon as the tensor is dropped (a late write would then land
in A's new tensor).
"""

from __future__ import annotations

import torch
import torch.fx

from npudsl.race._access import Access, accesses, aliases
from npudsl.race._lifetime import only_alias
from npudsl.race._names import describe, describe_memory
from npudsl.race._source import location
from npudsl.race._timeline import Timeline

__all__ = ["unordered_frees"]


def _users(group: list[torch.fx.Node]) -> list[torch.fx.Node]:
    """Every node using the memory of ``group`` (a root and its aliases); one that only stands for it (a view, an
    eval-mode ``F.dropout`` handing it back) is no use itself, only its users are (``_lifetime.only_alias``)."""
    return [user for node in group for user in node.users if not only_alias(user)]


def _next_allocation(
    allocations: list[Access], order: dict[torch.fx.Node, int], after: int, stream: str, timeline: Timeline
) -> torch.fx.Node | None:
    for allocation in allocations:
        if order[allocation.node] > after and timeline.stamps[allocation.node].stream == stream:
            return allocation.node
    return None


def _crossing_accesses(found: list[Access], timeline: Timeline) -> list[Access]:
    """Reads and in-place writes of memory made by an op (not a graph input) on a stream other than the maker's."""
    return [
        access
        for access in found
        if access.node is not access.memory
        and access.memory.op not in ("placeholder", "get_attr")
        and timeline.stamps[access.memory].stream != timeline.stamps[access.node].stream
    ]


def _message(read: Access, reuse: torch.fx.Node, timeline: Timeline) -> str:
    made, used = timeline.stamps[read.memory].stream, timeline.stamps[read.node].stream
    name = describe_memory(read.memory, read.through, read.node)
    how, access = ("written in place", "write") if read.write else ("read", "read")
    return (
        f"tensor {name} made on stream {made!r} at {location(read.memory)} is {how} on stream {used!r} at "
        f"{location(read.node)}, then dropped, and stream {made!r} allocates again at {location(reuse)} before "
        f"that {access} is known to be done: call runtime.record_stream({describe(read.through)[1:-1]}, {used!r}) "
        f"(or @keep_output) where it crosses"
    )


def unordered_frees(graph: torch.fx.Graph, timeline: Timeline) -> list[str]:
    order = {node: index for index, node in enumerate(graph.nodes)}
    found = list(accesses(graph))
    allocations = [a for a in found if a.write and a.node is a.memory and a.node.op not in ("placeholder", "get_attr")]
    groups = aliases(graph)
    problems: list[str] = []
    reported: set[tuple[torch.fx.Node, str]] = set()
    for read in _crossing_accesses(found, timeline):
        used = timeline.stamps[read.node].stream
        users = _users(groups[read.memory])
        if (read.memory, used) in reported or used in timeline.kept_for.get(read.memory, ()):
            continue
        if any(user.op == "output" for user in users):
            continue
        last = max(order[user] for user in users)
        reuse = _next_allocation(allocations, order, last, timeline.stamps[read.memory].stream, timeline)
        if reuse is not None and not timeline.happens_before(read.node, reuse):
            reported.add((read.memory, used))
            problems.append(_message(read, reuse, timeline))
    return problems
