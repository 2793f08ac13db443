"""The cross-stream rules, checked on a :class:`~npudsl.race._timeline.Timeline`.

Read rule: a node on stream B that reads a tensor made by a node on stream A != B
must happen after it: B waited for an event recorded on A after the producer.

Free rule: the graph drops a tensor after its last use (or never, when it is a
graph output). If a tensor made on stream A is read on stream B and not kept for B
with ``record_stream(t, B)``, every such read must happen before the first op that
allocates on A after the tensor's last use, since the caching allocator hands the
memory to A's next allocation as soon as the tensor is dropped.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator

import torch
import torch.fx

from npudsl.race._source import location
from npudsl.race._timeline import Timeline, runtime_op, source

__all__ = ["unordered_frees", "unsynchronized_reads"]


def _is_tensor(node: torch.fx.Node) -> bool:
    value = node.meta.get("example_value", node.meta.get("val"))
    if value is None:
        return True
    if isinstance(value, (tuple, list)):
        return any(isinstance(item, torch.Tensor) for item in value)
    return isinstance(value, torch.Tensor)


def _is_getitem(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and node.target is operator.getitem


def _reads(graph: torch.fx.Graph) -> Iterator[tuple[torch.fx.Node, torch.fx.Node]]:
    """Each (producer, reader) pair of a kernel reading a tensor; outputs and runtime ops do not read."""
    for node in graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module") or _is_getitem(node) or runtime_op(node):
            continue
        for argument in node.all_input_nodes:
            if _is_tensor(argument):
                yield source(argument), node


def unsynchronized_reads(graph: torch.fx.Graph, timeline: Timeline) -> list[str]:
    problems = []
    for producer, reader in _reads(graph):
        made, used = timeline.stamps[producer], timeline.stamps[reader]
        if made.stream != used.stream and not timeline.happens_before(producer, reader):
            problems.append(
                f"tensor '{producer.name}' made on stream {made.stream!r} at {location(producer)} is read on "
                f"stream {used.stream!r} at {location(reader)} with no wait in between: record an event on "
                f"{made.stream!r} after the producer and wait for it on {used.stream!r} before the read"
            )
    return problems


def _users(node: torch.fx.Node) -> list[torch.fx.Node]:
    """Every node using ``node`` or a ``getitem`` of it."""
    found = []
    for user in node.users:
        found.extend(_users(user) if _is_getitem(user) else [user])
    return found


def _allocates(node: torch.fx.Node) -> bool:
    return node.op in ("call_function", "call_method", "call_module") and not _is_getitem(node) \
        and runtime_op(node) is None and _is_tensor(node)


def _next_allocation(order: list[torch.fx.Node], after: int, stream: str, timeline: Timeline) -> torch.fx.Node | None:
    for node in order[after + 1:]:
        if _allocates(node) and timeline.stamps[node].stream == stream:
            return node
    return None


def unordered_frees(graph: torch.fx.Graph, timeline: Timeline) -> list[str]:
    order = list(graph.nodes)
    position = {node: index for index, node in enumerate(order)}
    problems: list[str] = []
    reported: set[tuple[torch.fx.Node, str]] = set()
    for producer, reader in _reads(graph):
        made, used = timeline.stamps[producer], timeline.stamps[reader]
        if made.stream == used.stream or producer.op in ("placeholder", "get_attr"):
            continue
        if (producer, used.stream) in reported:
            continue
        users = _users(producer)
        if used.stream in timeline.kept_for.get(producer, ()) or any(u.op == "output" for u in users):
            continue
        reuse = _next_allocation(order, max(position[u] for u in users), made.stream, timeline)
        if reuse is not None and not timeline.happens_before(reader, reuse):
            reported.add((producer, used.stream))
            problems.append(
                f"tensor '{producer.name}' made on stream {made.stream!r} at {location(producer)} is read on "
                f"stream {used.stream!r} at {location(reader)}, then dropped, and stream {made.stream!r} "
                f"allocates again at {location(reuse)} before that read is known to be done: call "
                f"runtime.record_stream({producer.name}, {used.stream!r}) (or @keep_output) where it crosses"
            )
    return problems
