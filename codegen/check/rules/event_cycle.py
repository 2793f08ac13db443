"""NPD203: functions that wait for each other's events (a cycle), so none of them can go first.

The graph: function ``a`` -> event ``e`` -> function ``b`` when ``a`` waits for
``e`` and ``b`` records it. A cycle is reported once per strongly connected
part of the graph, spelled from its first function in source order.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.scope import by_scope, event_uses
from codegen.frontend.ir import Loc, StreamFunction
from npudsl import codes

__all__ = ["RULE"]

Edges = dict[int, list[tuple[str, int]]]  # function -> [(event it waits for, function recording it)]


def _find(ctx: Context) -> Iterator[Finding]:
    for functions in by_scope(ctx.ir).values():
        edges = _edges(functions)
        for part in _strong_parts(len(functions), edges):
            start = min(part)
            path = _cycle_from(start, edges, set(part))
            if path:
                yield _finding(functions, path)


def _edges(functions: list[StreamFunction]) -> Edges:
    position = {id(fn): i for i, fn in enumerate(functions)}
    recorders = event_uses(functions, "records")
    edges: Edges = {i: [] for i in range(len(functions))}
    for i, fn in enumerate(functions):
        for name in dict.fromkeys(n for spec in fn.waits for n in spec.names):
            targets = dict.fromkeys(position[id(r)] for r, _ in recorders.get(name, ()))
            edges[i].extend((name, j) for j in targets)
    return edges


def _strong_parts(count: int, edges: Edges) -> list[list[int]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    parts: list[list[int]] = []
    for root in range(count):
        if root not in index:
            _visit(root, edges, index, low, stack, on_stack, parts)
    return parts


def _visit(
    root: int,
    edges: Edges,
    index: dict[int, int],
    low: dict[int, int],
    stack: list[int],
    on_stack: set[int],
    parts: list[list[int]],
) -> None:
    work = [(root, 0)]
    while work:
        node, child = work.pop()
        if child == 0:
            index[node] = low[node] = len(index)
            stack.append(node)
            on_stack.add(node)
        if child < len(edges[node]):
            work.append((node, child + 1))
            target = edges[node][child][1]
            if target not in index:
                work.append((target, 0))
            elif target in on_stack:
                low[node] = min(low[node], index[target])
            continue
        if low[node] == index[node]:
            parts.append(_pop_part(node, stack, on_stack))
        if work:
            parent = work[-1][0]
            low[parent] = min(low[parent], low[node])


def _pop_part(node: int, stack: list[int], on_stack: set[int]) -> list[int]:
    part = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        part.append(member)
        if member == node:
            return part


def _cycle_from(start: int, edges: Edges, part: set[int]) -> list[tuple[int, str]]:
    """A shortest path start -> ... -> start inside ``part``, as (function, event it waits for) steps."""
    previous: dict[int, tuple[int, str]] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for event, target in edges[node]:
                if target not in part or (target in previous and target != start):
                    continue
                previous[target] = (node, event)
                if target == start:
                    return _unwind(start, previous)
                following.append(target)
        frontier = following
    return []


def _unwind(start: int, previous: dict[int, tuple[int, str]]) -> list[tuple[int, str]]:
    steps = []
    node = start
    while True:
        node, event = previous[node]
        steps.append((node, event))
        if node == start:
            return steps[::-1]


def _finding(functions: list[StreamFunction], path: list[tuple[int, str]]) -> Finding:
    first, event = path[0]
    spelled = " -> ".join(f"{functions[i].qualname} -> {e}" for i, e in path) + f" -> {functions[first].qualname}"
    return Finding(
        loc=_wait_loc(functions[first], event),
        message=f"these functions wait for each other's events, so none can start: {spelled}",
        hint="break the cycle: one of these waits must be for work that runs earlier; drop it or "
        "wait for another event",
    )


def _wait_loc(fn: StreamFunction, event: str) -> Loc:
    return next(spec.loc for spec in fn.waits if event in spec.names)


RULE = Rule(code=codes.WAIT_CYCLE, find=_find)
