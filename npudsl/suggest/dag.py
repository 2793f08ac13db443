"""Stage 2: what each call unit needs, makes and may overlap with, from the graph's data dependencies.

For one unit instance: its cost, where it starts (the fork: the side stream waits
for everything the main stream issued before the call), and its join: the first
op outside the unit that reads one of its results (the main stream waits there,
as the transformer's automatic sync does). The ops between the fork and the join
are the window where the unit can run beside the main stream. A unit is not
movable when moving it would race (it writes a tensor the window reads, or the
window writes a tensor it reads) or when nothing outside reads its results.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import torch.fx

from npudsl import forkjoin
from npudsl.race._alias import is_tensor, root, writes
from npudsl.race._timeline import runtime_op
from npudsl.suggest.units import Instance, SourceDefs, frames_of

__all__ = ["Unit", "analyze", "results"]


@attrs.frozen(kw_only=True)
class Unit:
    instance: Instance
    cost: float  # microseconds, the sum of its ops
    join: int | None  # index of the first op outside that reads a result; None: no result is read
    parent: Instance | None
    problem: str | None = None  # why it cannot be moved

    @property
    def fork(self) -> int:
        return self.instance.nodes[0]

    @property
    def movable(self) -> bool:
        return self.problem is None and self.join is not None and self.cost > 0


def _statement_start(instance: Instance, reader: int, nodes: list[torch.fx.Node], defs: SourceDefs) -> int:
    """The first op of the caller's statement that holds op ``reader``: the join waits before the statement."""
    statement = frames_of(nodes[reader], defs)[: instance.depth + 1]
    start = reader
    while start - 1 > instance.nodes[-1] and frames_of(nodes[start - 1], defs)[: instance.depth + 1] == statement:
        start -= 1
    return start


def results(instance: Instance, nodes: list[torch.fx.Node]) -> list[torch.fx.Node]:
    """What a call hands to the ops after it: the values it makes, and the tensors it writes in place."""
    made = [nodes[i] for i in instance.nodes]
    return made + [w for node in made for w in writes(node) if w not in made]


def _join(
    instance: Instance, nodes: list[torch.fx.Node], index: dict[torch.fx.Node, int], defs: SourceDefs
) -> int | None:
    inside, last = set(instance.nodes), instance.nodes[-1]
    readers = [
        index[user]
        for node in results(instance, nodes)
        for user in node.users
        if index[user] not in inside and index[user] > last
    ]
    first = forkjoin.join_point(readers, None)  # no reader: nothing to join, the unit stays where it is
    return _statement_start(instance, first, nodes, defs) if first is not None else None


def _roots(nodes: list[torch.fx.Node]) -> set[torch.fx.Node]:
    return {root(n) for n in nodes if is_tensor(n)}


def _race(instance: Instance, join: int, nodes: list[torch.fx.Node], index: dict[torch.fx.Node, int]) -> str | None:
    """Whether the call and the window touch one memory, one of them writing it (through views too)."""
    inside = set(instance.nodes)
    window = [nodes[i] for i in range(instance.nodes[0], join) if i not in inside]
    mine = [nodes[i] for i in instance.nodes]
    reads = _roots([a for n in mine for a in n.all_input_nodes if index[a] not in inside])
    written = {m for m in _roots([w for n in mine for w in writes(n)]) if index[m] not in inside}
    for node in window:
        if _roots(list(writes(node))) & (reads | written):
            return f"{node.name} writes a tensor it reads"
        if written & _roots(node.all_input_nodes):
            return f"it writes a tensor {node.name} reads"
    return None


def _on_streams(nodes: list[torch.fx.Node]) -> set[int]:
    """Ops already inside a ``stream_enter`` ... ``stream_exit`` (the source has decorators there)."""
    depth, inside = 0, set()
    for i, node in enumerate(nodes):
        op = runtime_op(node)
        depth += (op == "stream_enter") - (op == "stream_exit")
        if depth:
            inside.add(i)
    return inside


def _parent(instance: Instance, earlier: list[Instance]) -> Instance | None:
    return next(
        (
            p
            for p in reversed(earlier)
            if p.depth == instance.depth - 1 and p.nodes[0] <= instance.nodes[0] and instance.nodes[-1] <= p.nodes[-1]
        ),
        None,
    )


def analyze(
    instances: list[Instance], nodes: list[torch.fx.Node], cost: Callable[[torch.fx.Node], float], defs: SourceDefs
) -> list[Unit]:
    """Each instance's facts (``instances`` in order of their first op)."""
    index = {node: i for i, node in enumerate(nodes)}
    units, placed = [], _on_streams(nodes)
    for k, instance in enumerate(instances):
        join = _join(instance, nodes, index, defs)
        problem = _race(instance, join, nodes, index) if join is not None else "nothing reads its result"
        if placed.intersection(instance.nodes):
            problem = "it is already on a side stream"
        units.append(
            Unit(
                instance=instance,
                cost=sum(cost(nodes[i]) for i in instance.nodes),
                join=join,
                parent=_parent(instance, instances[:k]),
                problem=problem,
            )
        )
    return units
