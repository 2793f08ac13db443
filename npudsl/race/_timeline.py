"""Streams and vector clocks of a captured graph, in program order.

Every node runs on the stream named by the innermost open ``stream_enter``
("default" outside all of them). Each non-runtime node takes the next tick of its
stream. A stream's clock says, per stream, the last tick known to have finished
before the stream's next op: ``event_record`` copies the current stream's clock
into the event, ``event_wait`` joins the event's clock into the current stream's.
Graph inputs and attributes are made on the main stream at tick 0, before every
op of every stream.
"""

from __future__ import annotations

from typing import Any

import attrs
import torch
import torch.fx

from npudsl.errors import StreamRaceError
from npudsl.race._alias import root
from npudsl.race._source import location
from npudsl.runtime._ops import OPS

__all__ = ["Stamp", "Timeline", "build", "runtime_op"]

MAIN = "default"
_BY_TARGET = {target: name for name, packet in OPS.items() for target in (packet, packet.default)}


@attrs.frozen(kw_only=True)
class Stamp:
    """Where a node ran: its stream, its tick there, and the stream's clock at that point."""

    stream: str
    tick: int
    clock: dict[str, int]


@attrs.define
class Timeline:
    """The stamps of a graph's nodes, the events' records, and the findings of the walk."""

    stamps: dict[torch.fx.Node, Stamp] = attrs.Factory(dict)
    recorded: dict[str, dict[str, int]] = attrs.Factory(dict)
    kept_for: dict[torch.fx.Node, set[str]] = attrs.Factory(dict)
    problems: list[str] = attrs.Factory(list)

    def happens_before(self, earlier: torch.fx.Node, later: torch.fx.Node) -> bool:
        first, second = self.stamps[earlier], self.stamps[later]
        if first.stream == second.stream:
            return first.tick <= second.tick
        return second.clock.get(first.stream, 0) >= first.tick


def runtime_op(node: torch.fx.Node) -> str | None:
    """The npudsl op a node calls (``"event_wait"``...), or ``None``."""
    if node.op != "call_function":
        return None
    return _BY_TARGET.get(node.target)


class _Walk:
    def __init__(self) -> None:
        self.timeline = Timeline()
        self.open: list[tuple[str, torch.fx.Node]] = []
        self.clocks: dict[str, dict[str, int]] = {}

    @property
    def stream(self) -> str:
        return self.open[-1][0] if self.open else MAIN

    def clock(self, stream: str) -> dict[str, int]:
        return self.clocks.setdefault(stream, {MAIN: 0})

    def visit(self, node: torch.fx.Node) -> None:
        name = runtime_op(node)
        if node.op in ("placeholder", "get_attr"):
            self.timeline.stamps[node] = Stamp(stream=MAIN, tick=0, clock={MAIN: 0})
        elif name is None:
            self.tick(node)
        else:
            getattr(self, name)(node, *node.args)

    def tick(self, node: torch.fx.Node) -> None:
        clock = self.clock(self.stream)
        clock[self.stream] = clock.get(self.stream, 0) + 1
        self.timeline.stamps[node] = Stamp(stream=self.stream, tick=clock[self.stream], clock=dict(clock))

    def stream_enter(self, node: torch.fx.Node, tag: str, _priority: int) -> None:
        self.open.append((MAIN if tag == MAIN else tag, node))

    def stream_exit(self, node: torch.fx.Node, tag: str) -> None:
        if not self.open or self.open[-1][0] != tag:
            raise StreamRaceError(f"{location(node)}: stream_exit({tag!r}) does not close the innermost stream_enter")
        self.open.pop()

    def event_record(self, _node: torch.fx.Node, event: str) -> None:
        self.timeline.recorded[event] = dict(self.clock(self.stream))

    def event_wait(self, node: torch.fx.Node, event: str) -> None:
        if event not in self.timeline.recorded:
            self.timeline.problems.append(_unrecorded(node, event, self.stream))
            return
        clock = self.clock(self.stream)
        for stream, tick in self.timeline.recorded[event].items():
            clock[stream] = max(clock.get(stream, 0), tick)

    def record_stream(self, _node: torch.fx.Node, tensor: Any, tag: str) -> None:
        if isinstance(tensor, torch.fx.Node):
            self.timeline.kept_for.setdefault(root(tensor), set()).add(tag)

    def core_limit_enter(self, *_: Any) -> None:
        """Core limits do not order anything."""

    def core_limit_exit(self, *_: Any) -> None:
        """Core limits do not order anything."""


def _unrecorded(node: torch.fx.Node, event: str, stream: str) -> str:
    from npudsl.graph_breaks import WHOLE, last_break

    later = [user for user in node.graph.nodes if runtime_op(user) == "event_record" and user.args[0] == event]
    where = f" (it is recorded only later, at {location(later[0])})" if later else ""
    head = (
        f"stream {stream!r} waits for event {event!r} at {location(node)}, but no earlier op of this graph "
        f"records it{where}"
    )
    broke = None if later else last_break()
    if broke is not None:
        return (
            f"{head}: its fork is in an earlier captured graph, torch.compile broke the graph between the "
            f"fork and this join at {broke}; {WHOLE}"
        )
    return (
        f"{head}; as in torchair, waiting for an event never recorded is an error: a decorated call's fork and "
        f"its join must be in one captured graph ({WHOLE}); with runtime calls written by hand, "
        f"call runtime.record({event!r}) on the producing stream before the wait"
    )


def build(graph: torch.fx.Graph) -> Timeline:
    """Walk ``graph`` once, in program order."""
    walk = _Walk()
    for node in graph.nodes:
        walk.visit(node)
    if walk.open:
        tag, node = walk.open[-1]
        raise StreamRaceError(f"{location(node)}: stream_enter({tag!r}) is never closed in this graph")
    return walk.timeline
