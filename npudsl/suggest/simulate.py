"""Predict the timeline of a proposed placement, as ``npudsl schedule`` will draw the applied source.

The rules are those of :func:`npudsl.timeline.simulate.simulate` applied to the
code the transformer writes for ``@on_stream`` with automatic sync: every stream
runs its ops in program order; a moved unit's stream first waits for the main
stream's work issued before the call (the fork), and the main stream waits for
the unit's last op before the statement that reads a result (the join).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs
import torch.fx

from npudsl.race._timeline import runtime_op
from npudsl.suggest.dag import Unit
from npudsl.timeline.cost import name_of
from npudsl.timeline.simulate import MAIN, Arrow, Region, Schedule, Slot

__all__ = ["MAIN", "predict"]

_COMPUTE = ("call_function", "call_method", "call_module")


@attrs.define
class _Run:
    cost: Callable[[torch.fx.Node], float]
    clock: dict[str, float] = attrs.Factory(lambda: {MAIN: 0.0})
    slots: list[Slot] = attrs.Factory(list)
    arrows: list[Arrow] = attrs.Factory(list)
    regions: list[Region] = attrs.Factory(list)
    joins: dict[int, list[tuple[str, float]]] = attrs.Factory(dict)

    def wait(self, source: str, at: float, target: str, event: str) -> None:
        until = max(self.clock.setdefault(target, 0.0), at)
        self.arrows.append(Arrow(event=event, source=source, at=at, target=target, until=until))
        self.clock[target] = until

    def run(self, node: torch.fx.Node, stream: str) -> None:
        cost = self.cost(node) if node.op in _COMPUTE and runtime_op(node) is None else 0.0
        if cost > 0:
            start = self.clock[stream]
            self.slots.append(Slot(stream=stream, label=name_of(node), start=start, end=start + cost))
            self.clock[stream] = start + cost

    def unit(self, unit: Unit, stream: str, nodes: list[torch.fx.Node], label: str) -> None:
        self.wait(MAIN, self.clock[MAIN], stream, f"{label}.fork")
        first = len(self.slots)
        for i in unit.instance.nodes:
            self.run(nodes[i], stream)
        mine = self.slots[first:]
        if mine:
            self.regions.append(Region(stream=stream, label=label, start=mine[0].start, end=mine[-1].end))
        assert unit.join is not None
        self.joins.setdefault(unit.join, []).append((stream, self.clock[stream]))


def predict(nodes: list[torch.fx.Node], cost: Callable[[torch.fx.Node], float],
            moves: Mapping[Unit, tuple[str, str]]) -> Schedule:
    """The timeline when each unit of ``moves`` runs on its stream: ``unit -> (stream, label)``."""
    run = _Run(cost=cost)
    starts = {unit.fork: unit for unit in moves}
    inside = {i for unit in moves for i in unit.instance.nodes}
    for i, node in enumerate(nodes):
        for stream, at in run.joins.pop(i, ()):
            run.wait(stream, at, MAIN, f"{stream}.join")
        if i in starts:
            stream, label = moves[starts[i]]
            run.unit(starts[i], stream, nodes, label)
        elif i not in inside:
            run.run(node, MAIN)
    return Schedule(streams=tuple(run.clock), slots=tuple(run.slots), arrows=tuple(run.arrows),
                    serial=sum(s.end - s.start for s in run.slots), regions=tuple(run.regions))
