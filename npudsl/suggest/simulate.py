"""Predict the timeline of a proposed placement, as ``npudsl schedule`` will draw the applied source.

The rules are those of :func:`npudsl.timeline.simulate.simulate` applied to the
code the transformer writes for ``@on_stream`` with automatic sync: every stream
runs its ops in program order, and each moved unit is a call with the fork and
join of :mod:`npudsl.forkjoin` (its stream first waits for the main stream's
work issued before the call; the main stream waits for the unit's last op
before the statement that reads a result, ``Unit.join``). A unit whose statement
moved up is issued before an earlier op (its join stays). No moved unit reads
another's result (the plan sees to it), so every join is the main stream's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping

import attrs
import torch.fx

from npudsl import forkjoin
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
    on: str = MAIN  # the stream issuing now
    pending: dict[Unit, tuple[_Events, str]] = attrs.Factory(dict)  # not joined yet: its events, its label

    def wait(self, source: str, at: float, event: str) -> None:
        until = max(self.clock[self.on], at)
        self.arrows.append(Arrow(event=event, source=source, at=at, target=self.on, until=until))
        self.clock[self.on] = until

    @contextlib.contextmanager
    def switch(self, stream: str) -> Iterator[None]:
        before, self.on = self.on, stream
        self.clock.setdefault(stream, 0.0)
        try:
            yield
        finally:
            self.on = before

    def run(self, node: torch.fx.Node) -> None:
        cost = self.cost(node) if node.op in _COMPUTE and runtime_op(node) is None else 0.0
        if cost > 0:
            start = self.clock[self.on]
            self.slots.append(Slot(stream=self.on, label=name_of(node), start=start, end=start + cost))
            self.clock[self.on] = start + cost

    def unit(self, unit: Unit, stream: str, label: str, nodes: list[torch.fx.Node]) -> None:
        first, events = len(self.slots), _Events(self)
        with forkjoin.forked(events, label, self.switch(stream)):
            for i in unit.instance.nodes:
                self.run(nodes[i])
        mine = self.slots[first:]
        if mine:
            self.regions.append(Region(stream=stream, label=label, start=mine[0].start, end=mine[-1].end))
        self.pending[unit] = (events, label)

    def join(self, unit: Unit) -> None:
        if unit in self.pending:
            forkjoin.join(*self.pending.pop(unit))


@attrs.define
class _Events:
    """One moved unit's fork and join events, recorded and waited for on the run's clocks (each unit its own:
    two units of one label are two calls)."""

    run: _Run
    recorded: dict[str, tuple[str, float]] = attrs.Factory(dict)  # event -> the stream that recorded it, when

    def record(self, event: str) -> None:
        self.recorded[event] = (self.run.on, self.run.clock[self.run.on])

    def wait(self, event: str) -> None:
        self.run.wait(*self.recorded[event], event)


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
            run.run(node)
    return Schedule(
        streams=tuple(run.clock),
        slots=tuple(run.slots),
        arrows=tuple(run.arrows),
        serial=sum(s.end - s.start for s in run.slots),
        regions=tuple(run.regions),
    )
