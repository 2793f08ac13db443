"""Prove a hand-written schedule minimal: race-free as written, and no sync call can go without a race.

The hand version is compiled whole with the race-checking backend
(``npudsl.race.npudsl_backend``) and its captured graph kept. Each sync call of
that graph is then dropped alone, from a copy of the graph, and the checker run
on the copy (the graph is one forward in program order, so dropping its node is
dropping the call):

- a ``record``, ``wait`` or ``record_stream`` is needed when the copy without it
  has a race;
- a stream switch (``stream_enter`` and its ``stream_exit``) moves its body onto
  the enclosing stream when dropped, which is never a race; it is needed when its
  body does work, it is not merely continuing the previous block of the same
  stream (the two could be one block: a fork and join too many), and, when an
  earlier block of its stream exists, it starts by waiting for something (else its
  work could have gone into that block). A switch whose removal does race (a wait
  inside now orders the wrong stream) is needed too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import torch
import torch.fx

from npudsl.race import find_races, npudsl_backend
from npudsl.race._timeline import runtime_op
from npudsl.testing.standins import copy_graph

__all__ = ["Drop", "capture", "drops", "switch_reason", "sync_nodes"]

_SYNC = ("stream_enter", "event_record", "event_wait", "record_stream")


@attrs.frozen
class Drop:
    """One sync call of the hand graph, and what dropping it does."""

    index: int
    call: str  # e.g. "event_wait('fork')"
    needed: bool
    why: str


def capture(model: torch.nn.Module, inputs: tuple[Any, ...]) -> tuple[torch.fx.GraphModule, Any]:
    """The graph ``torch.compile(model, backend=npudsl_backend, fullgraph=True)`` captures, and the outputs.

    A race raises :class:`~npudsl.errors.StreamRaceError` here."""
    graphs: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        graphs.append(copy_graph(gm))
        return npudsl_backend(gm, example_inputs)

    torch._dynamo.reset()
    with torch.no_grad():
        outputs = torch.compile(model, backend=backend, fullgraph=True)(*inputs)
    if len(graphs) != 1:
        raise AssertionError(f"{len(graphs)} graphs: the hand version must be captured whole")
    return graphs[0], outputs


def sync_nodes(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    return [node for node in gm.graph.nodes if runtime_op(node) in _SYNC]


def _describe(node: torch.fx.Node) -> str:
    args = ", ".join(a.name if isinstance(a, torch.fx.Node) else repr(a) for a in node.args[:2])
    return f"{runtime_op(node)}({args})"


def _exit_of(enter: torch.fx.Node) -> torch.fx.Node:
    depth, node = 0, enter.next
    while True:
        name = runtime_op(node)
        if name == "stream_enter":
            depth += 1
        elif name == "stream_exit":
            if depth == 0:
                return node
            depth -= 1
        node = node.next


def _without(gm: torch.fx.GraphModule, index: int) -> torch.fx.GraphModule:
    copy = copy_graph(gm)
    node = sync_nodes(copy)[index]
    if runtime_op(node) == "stream_enter":
        copy.graph.erase_node(_exit_of(node))
    copy.graph.erase_node(node)
    copy.recompile()
    return copy


def _work_between(first: torch.fx.Node, last: torch.fx.Node) -> bool:
    """Whether any node strictly between ``first`` and ``last`` is work (not a runtime op, not the output)."""
    node = first.next
    while node is not last:
        if node.op in ("call_function", "call_method", "call_module") and runtime_op(node) is None:
            return True
        node = node.next
    return False


def _continues_previous_block(enter: torch.fx.Node) -> bool:
    """The block right before this one (only sync calls between) was on the same stream."""
    node = enter.prev
    while node.op != "root" and (runtime_op(node) in ("event_record", "event_wait", "record_stream")):
        node = node.prev
    return runtime_op(node) == "stream_exit" and node.args[0] == enter.args[0]


def _waits_first(enter: torch.fx.Node) -> bool:
    node = enter.next
    while runtime_op(node) in ("core_limit_enter", "record_stream"):
        node = node.next
    return runtime_op(node) == "event_wait"


def _earlier_block(enter: torch.fx.Node) -> bool:
    node = enter.prev
    while node.op != "root":
        if runtime_op(node) == "stream_enter" and node.args[0] == enter.args[0]:
            return True
        node = node.prev
    return False


def switch_reason(enter: torch.fx.Node) -> tuple[bool, str]:
    """Whether the switch ``enter`` is needed though dropping it races nowhere, and why (module docstring)."""
    if not _work_between(enter, _exit_of(enter)):
        return False, "its block does no work"
    if _continues_previous_block(enter):
        return False, "it continues the previous block of the same stream (merge them)"
    if not _waits_first(enter) and _earlier_block(enter):
        return False, "it waits for nothing: its work can go into the earlier block of its stream"
    return True, "its block overlaps the enclosing stream"


def drops(gm: torch.fx.GraphModule) -> list[Drop]:
    """Each sync call of ``gm``, dropped alone: is it needed?"""
    found = []
    for index, node in enumerate(sync_nodes(gm)):
        races = find_races(_without(gm, index))
        if races:
            needed, why = True, races[0].splitlines()[0]
        elif runtime_op(node) == "stream_enter":
            needed, why = switch_reason(node)
        else:
            needed, why = False, "no race without it"
        found.append(Drop(index, _describe(node), needed, why))
    return found
