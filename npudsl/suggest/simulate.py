"""Predict the timeline of a proposed placement, as ``npudsl schedule`` will draw the applied source.

The rules are those of :func:`npudsl.timeline.simulate.simulate` applied to the
code the transformer writes for ``@on_stream`` with automatic sync: every stream
runs its ops in program order; a moved unit's stream first waits for the main
stream's work issued before the call (the fork), and the main stream waits for
the unit's last op before the statement that reads a result (the join). A unit
whose statement moved up is issued before an earlier op (its join stays). No
moved unit reads another's result (the plan sees to it), so every join is the
main stream's.
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
    pending: dict[Unit, tuple[str, float]] = attrs.Factory(dict)  # not joined yet: its stream, its last op's end

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

    def unit(self, unit: Unit, stream: str, label: str, nodes: list[torch.fx.Node]) -> None:
        self.wait(MAIN, self.clock[MAIN], stream, f"{label}.fork")
        first = len(self.slots)
        for i in unit.instance.nodes:
            self.run(nodes[i], stream)
        mine = self.slots[first:]
        if mine:
            self.regions.append(Region(stream=stream, label=label, start=mine[0].start, end=mine[-1].end))
        self.pending[unit] = (stream, self.clock[stream])

    def join(self, unit: Unit) -> None:
        if unit in self.pending:
            stream, at = self.pending.pop(unit)
            self.wait(stream, at, MAIN, f"{stream}.join")


def predict(
    nodes: list[torch.fx.Node],
    cost: Callable[[torch.fx.Node], float],
    moves: Mapping[Unit, tuple[str, str]],
    early: Mapping[Unit, tuple[int, int]] | None = None,
) -> Schedule:
    """The timeline when each unit of ``moves`` runs on its stream: ``unit -> (stream, label)``. A unit of
    ``early`` (its statement moved up) is issued before an earlier op: ``unit -> (op, line)``, where ``line``,
    the first line of the statement it now precedes, orders two units issued before one op."""
    run = _Run(cost=cost)
    early = {unit: at for unit, at in (early or {}).items() if unit in moves and at[0] != unit.fork}
    hoisted: dict[int, list[Unit]] = {}
    for unit in sorted(early, key=lambda u: (early[u][1], u.fork)):
        hoisted.setdefault(early[unit][0], []).append(unit)
    starts = {unit.fork: unit for unit in moves if unit not in early}
    joins: dict[int, list[Unit]] = {}
    for unit in moves:
        assert unit.join is not None
        joins.setdefault(unit.join, []).append(unit)
    inside = {i for unit in moves for i in unit.instance.nodes}
    for i, node in enumerate(nodes):
        for unit in hoisted.get(i, ()):  # its statement now comes before the statement at op i
            run.unit(unit, *moves[unit], nodes)
        for unit in joins.get(i, ()):
            run.join(unit)
        if i in starts:
            run.unit(starts[i], *moves[starts[i]], nodes)
        elif i not in inside:
            run.run(node, MAIN)
    return Schedule(
        streams=tuple(run.clock),
        slots=tuple(run.slots),
        arrows=tuple(run.arrows),
        serial=sum(s.end - s.start for s in run.slots),
        regions=tuple(run.regions),
    )
