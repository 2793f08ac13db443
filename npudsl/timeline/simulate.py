"""Streams of a captured graph and a list-scheduling simulation of it.

Each op runs on the stream of the innermost open ``stream_enter`` ("default"
outside them). A stream runs its ops in program order, one at a time; an
``event_wait`` holds its stream until the latest ``event_record`` of that event
has been reached on the recording stream. Program order is a valid order for
all these constraints, so one pass gives every op its earliest start. The
single-stream time is the sum of all costs.

Each ``stream_enter`` ... ``stream_exit`` on a side stream is a :class:`Region`,
labelled with the function that runs there (``SharedExpert.forward``), read from
the node's source information.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import torch.fx

from npudsl.race._timeline import runtime_op
from npudsl.timeline.cost import name_of
from npudsl.timeline.labels import region_label

__all__ = ["Arrow", "Region", "Schedule", "Slot", "simulate"]

MAIN = "default"


@attrs.frozen
class Slot:
    """One op on the timeline."""

    stream: str
    label: str
    start: float
    end: float


@attrs.frozen
class Arrow:
    """An event edge: recorded on ``source`` at ``at``, waited for on ``target`` (stream free again at ``until``)."""

    event: str
    source: str
    at: float
    target: str
    until: float


@attrs.frozen
class Region:
    """One piece of side-stream work: what a stream method ran, from its first op to its exit."""

    stream: str
    label: str
    start: float
    end: float


@attrs.frozen
class Schedule:
    streams: tuple[str, ...]
    slots: tuple[Slot, ...]
    arrows: tuple[Arrow, ...]
    serial: float  # everything on one stream
    regions: tuple[Region, ...] = ()

    @property
    def makespan(self) -> float:
        return max((s.end for s in self.slots), default=0.0)

    @property
    def saving(self) -> float:
        """The predicted fraction of the single-stream time saved (0.25: a quarter)."""
        return 1.0 - self.makespan / self.serial if self.serial else 0.0


@attrs.define
class _Sim:
    cost: Callable[[torch.fx.Node], float]
    open: list[str] = attrs.Factory(list)
    clock: dict[str, float] = attrs.Factory(lambda: {MAIN: 0.0})
    recorded: dict[str, tuple[str, float]] = attrs.Factory(dict)
    slots: list[Slot] = attrs.Factory(list)
    arrows: list[Arrow] = attrs.Factory(list)
    entered: list[tuple[torch.fx.Node, int, torch.fx.Node | None]] = attrs.Factory(list)  # each open region:
    # its stream_enter, its first slot index, its first op
    regions: list[Region] = attrs.Factory(list)

    @property
    def stream(self) -> str:
        return self.open[-1] if self.open else MAIN

    def visit(self, node: torch.fx.Node) -> None:
        name = runtime_op(node)
        if name == "stream_enter":
            self.open.append(str(node.args[0]))
            self.clock.setdefault(self.stream, 0.0)
            self.entered.append((node, len(self.slots), None))
        elif name == "stream_exit":
            self.close_region()
            self.open.pop()
        elif name == "event_record":
            self.recorded[str(node.args[0])] = (self.stream, self.clock[self.stream])
        elif name == "event_wait" and str(node.args[0]) in self.recorded:
            self.wait(str(node.args[0]))
        elif name is None and node.op in ("call_function", "call_method", "call_module"):
            self.run(node)

    def close_region(self) -> None:
        enter, first, op = self.entered.pop()
        label = region_label(enter, op)
        mine = [s for s in self.slots[first:] if s.stream == self.stream]
        if self.stream != MAIN and mine:
            self.regions.append(Region(stream=self.stream, label=label, start=mine[0].start, end=mine[-1].end))

    def wait(self, event: str) -> None:
        source, at = self.recorded[event]
        until = max(self.clock[self.stream], at)
        self.arrows.append(Arrow(event=event, source=source, at=at, target=self.stream, until=until))
        self.clock[self.stream] = until

    def run(self, node: torch.fx.Node) -> None:
        if self.entered and self.entered[-1][2] is None:
            self.entered[-1] = (*self.entered[-1][:2], node)
        cost = self.cost(node)
        if cost <= 0:
            return
        start = self.clock[self.stream]
        self.slots.append(Slot(stream=self.stream, label=name_of(node), start=start, end=start + cost))
        self.clock[self.stream] = start + cost


def simulate(graph: torch.fx.Graph, cost: Callable[[torch.fx.Node], float]) -> Schedule:
    """Walk ``graph`` once in program order; ``cost(node)`` is an op's duration (0: not drawn)."""
    sim = _Sim(cost=cost)
    for node in graph.nodes:
        sim.visit(node)
    streams = tuple(sim.clock)
    return Schedule(
        streams=streams,
        slots=tuple(sim.slots),
        arrows=tuple(sim.arrows),
        serial=sum(s.end - s.start for s in sim.slots),
        regions=tuple(sim.regions),
    )
