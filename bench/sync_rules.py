"""What a careful engineer writes per target, derived from the portable hand-written schedule.

The hand versions (``bench/hand_written/``) are written once, with ``npudsl.runtime``;
their captured graph gives the portable count ``P`` (every switch, record, wait and
``record_stream`` of one forward). The other targets follow by rule:

- ``aclgraph`` = ``P``: torchair joins the side streams at the end of the graph itself.
- ``npugraph_ex``, ``cuda`` = ``P + 2 * U - R``, ``U`` the side streams left unjoined
  when the forward returns (no record on the stream after its last work that the main
  stream then waits for): a native capture must join every side stream, one record
  and one wait each. Joined where the model returns (before its caller goes on,
  :mod:`bench.sync_premise`), the ``R`` ``record_stream`` calls that kept a tensor
  for a stream still running after the return are no longer needed: each is dropped
  alone from the joined graph and counted when the checker finds no race.
- ``ge`` = ``S + F + E``: the stream switches ``S``; one ordering edge
  (``npu_wait_tensor``) per fork point ``F`` (a side block whose first call waits
  for an event last recorded on the main stream that is not a user event); one
  edge per record of a user event ``E`` that a stream then waits for (the
  ``@after``/``@records`` names, listed by the hand module in ``USER_EVENTS``; once
  however many streams wait for that record, once per layer for an event each layer
  records and waits for). No
  joins and no ``record_stream``: GE orders data and plans memory itself.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch.fx

from bench.sync_count import count_graph, total
from bench.sync_proof import drops
from npudsl.race._timeline import build, runtime_op
from npudsl.runtime._ops import OPS
from npudsl.testing.standins import copy_graph

__all__ = ["hand_counts", "unjoined_streams"]

MAIN = "default"


def _streams(gm: torch.fx.GraphModule) -> list[tuple[torch.fx.Node, str]]:
    """Every node with the stream it runs on (the innermost open ``stream_enter``)."""
    open_: list[str] = []
    found = []
    for node in gm.graph.nodes:
        name = runtime_op(node)
        if name == "stream_enter":
            open_.append(node.args[0])
        elif name == "stream_exit":
            open_.pop()
        found.append((node, open_[-1] if open_ else MAIN))
    return found


def unjoined_streams(gm: torch.fx.GraphModule) -> int:
    """How many side streams the main stream does not wait for before the graph ends."""
    return len(_unjoined(gm))


def _unjoined(gm: torch.fx.GraphModule) -> list[str]:
    """Side streams whose last work the main stream does not wait for before the graph ends."""
    copy = copy_graph(gm)
    output = next(n for n in copy.graph.nodes if n.op == "output")
    with copy.graph.inserting_before(output):
        end = copy.graph.call_function(abs, (0,))  # one tick of the main stream: its clock at the end
    timeline = build(copy.graph)
    last_work = {
        stream: node
        for node, stream in _streams(copy)
        if stream != MAIN and node.op != "output" and runtime_op(node) is None and node in timeline.stamps
    }
    clock = timeline.stamps[end].clock
    return [stream for stream, node in last_work.items() if clock.get(stream, 0) < timeline.stamps[node].tick]


def _in_caller(node: torch.fx.Node) -> bool:
    """The node is the caller's own work (its innermost frame is ``Caller.forward``)."""
    frames = [line.strip() for line in (node.meta.get("stack_trace") or "").splitlines() if line.strip()]
    calls = [line for line in frames if line.startswith("File ")]
    return bool(calls) and "sync_premise.py" in calls[-1] and calls[-1].endswith("in forward")


def _model_end(gm: torch.fx.GraphModule) -> torch.fx.Node:
    """Where the model returns: before the caller's own work after the call (``Caller``), else the output."""
    nodes = list(gm.graph.nodes)
    end = nodes[-1]
    for node in reversed(nodes[:-1]):
        if not _in_caller(node):
            break
        end = node
    return end


def _joined(gm: torch.fx.GraphModule, streams: list[str]) -> torch.fx.GraphModule:
    """A copy of ``gm`` joining each of ``streams`` where the model returns, as a native capture must."""
    copy = copy_graph(gm)
    with copy.graph.inserting_before(_model_end(copy)):
        for stream in streams:
            for op, args in (
                ("stream_enter", (stream, 0)),
                ("event_record", (f"end:{stream}",)),
                ("stream_exit", (stream,)),
                ("event_wait", (f"end:{stream}",)),
            ):
                copy.graph.call_function(OPS[op].default, args)
    copy.recompile()
    return copy


def _kept_for_after_return(gm: torch.fx.GraphModule, streams: list[str]) -> int:
    """The ``record_stream`` calls of ``gm`` that joining ``streams`` at the return makes unneeded."""
    if not streams:
        return 0
    return sum(d.call.startswith("record_stream(") and not d.needed for d in drops(_joined(gm, streams)))


def _fork_points(gm: torch.fx.GraphModule, user_events: Iterable[str]) -> int:
    user = set(user_events)
    recorded_on: dict[str, str] = {}
    forks, opening = 0, False  # opening: only a stream_enter (and core limits) since the block began
    for node, stream in _streams(gm):
        name = runtime_op(node)
        if name == "event_record":
            recorded_on[node.args[0]] = stream
        elif name == "event_wait" and opening and stream != MAIN:
            event = node.args[0]
            forks += event not in user and recorded_on.get(event) == MAIN
        opening = name == "stream_enter" or (opening and name == "core_limit_enter")
    return forks


def _user_edges(gm: torch.fx.GraphModule, user_events: Iterable[str]) -> int:
    """The records of user events that some stream waits for before the event is recorded again: each is one
    ordering edge on GE (a layer's record and wait are not the next layer's)."""
    user, pending, edges = set(user_events), set(), 0
    for node in gm.graph.nodes:
        name = runtime_op(node)
        if name not in ("event_record", "event_wait") or node.args[0] not in user:
            continue
        if name == "event_record":
            pending.add(node.args[0])
        elif node.args[0] in pending:
            pending.discard(node.args[0])
            edges += 1
    return edges


def hand_counts(gm: torch.fx.GraphModule, user_events: Iterable[str]) -> dict[str, int]:
    """The hand-written count per target for the portable hand graph ``gm`` (see the module docstring)."""
    counts = count_graph(gm)
    portable = total(counts)
    unjoined = _unjoined(gm)
    native = portable + 2 * len(unjoined) - _kept_for_after_return(gm, unjoined)
    ge = counts["switch"] + _fork_points(gm, user_events) + _user_edges(gm, user_events)
    return {"portable": portable, "aclgraph": portable, "ge": ge, "npugraph_ex": native, "cuda": native}
