"""What a careful engineer writes per target, derived from the portable hand-written schedule.

The hand versions (``bench/hand_written/``) are written once, with ``npudsl.runtime``;
their captured graph gives the portable count ``P`` (every switch, record, wait and
``record_stream`` of one forward). The other targets follow by rule:

- ``aclgraph`` = ``P``: torchair joins the side streams at the end of the graph itself.
- ``npugraph_ex``, ``cuda`` = ``P + 2 * U``, ``U`` the side streams left unjoined when
  the forward returns (no record on the stream after its last work that the main
  stream then waits for): a native capture must join every side stream, one
  record and one wait each.
- ``ge`` = ``S + F + E``: the stream switches ``S``; one ordering edge
  (``npu_wait_tensor``) per fork point ``F`` (a side block whose first call waits
  for an event last recorded on the main stream that is not a user event); one
  edge per user event ``E`` (the ``@after``/``@records`` names, listed by the hand
  module in ``USER_EVENTS``, counted once however many streams wait for it). No
  joins and no ``record_stream``: GE orders data and plans memory itself.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch.fx

from bench.sync_count import count_graph, total
from npudsl.race._timeline import build, runtime_op
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
    """Side streams whose last work the main stream does not wait for before the graph ends."""
    copy = copy_graph(gm)
    output = next(n for n in copy.graph.nodes if n.op == "output")
    with copy.graph.inserting_before(output):
        end = copy.graph.call_function(abs, (0,))  # one tick of the main stream: its clock at the end
    timeline = build(copy.graph)
    last_work = {stream: node for node, stream in _streams(copy)
                 if stream != MAIN and node.op != "output" and runtime_op(node) is None and node in timeline.stamps}
    clock = timeline.stamps[end].clock
    return sum(clock.get(stream, 0) < timeline.stamps[node].tick for stream, node in last_work.items())


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


def hand_counts(gm: torch.fx.GraphModule, user_events: Iterable[str]) -> dict[str, int]:
    """The hand-written count per target for the portable hand graph ``gm`` (see the module docstring)."""
    counts = count_graph(gm)
    portable = total(counts)
    native = portable + 2 * unjoined_streams(gm)
    waited = {n.args[0] for n in gm.graph.nodes if runtime_op(n) == "event_wait"}
    ge = counts["switch"] + _fork_points(gm, user_events) + len(waited & set(user_events))
    return {"portable": portable, "aclgraph": portable, "ge": ge, "npugraph_ex": native, "cuda": native}
