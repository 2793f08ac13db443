"""Prove a GE graph's sync calls needed: the minimality proof of :mod:`bench.sync_proof`, read on torchair's ops.

GE code orders with torchair's ops (``npu_stream_switch``, ``npu_wait_tensor``,
``torchair.ops.record``/``wait``), which the captured graph holds as stand-in ops;
:mod:`bench.sync_proof` reads npudsl's runtime ops, so on a GE graph it found no
call to drop at all. Here each GE sync call is dropped alone from a copy of the
stand-in graph, the copy lowered as the GE stand-in backend lowers it (GE's own
data edges and memory planning added, :func:`npudsl.testing.standins.lower`) and
the checker run on it:

- a ``wait`` or ``npu_wait_tensor`` is needed when the copy without it races (its
  result is ``self``: dropping it hands ``self`` to its users); a ``record`` token
  is dropped with it from every ``wait`` that names it;
- a stream switch is needed by :func:`bench.sync_proof.switch_reason`, read on the
  lowered graph (a block that starts by waiting for another stream's data, as GE
  orders it, starts by waiting);
- a wait that opens a side block on another stream's work is the fork of CONTRACT
  section 2: GE's data edges leave no race without it, but it is the schedule's
  order (the side work starts after the caller's), as a user event is; it stays,
  as :mod:`bench.sync_rules` counts one edge per fork point of a hand version.

Each call is described with its source line, so that the user's own events
(``@after``/``@records``, kept whatever the checker says) are found by name in it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx

from bench.sync_proof import Drop, switch_reason
from npudsl.race import find_races
from npudsl.race._timeline import runtime_op
from npudsl.testing import standins
from npudsl.testing.standins._ops import op_name

__all__ = ["capture_ge", "ge_drops", "ge_sync_nodes"]

_ORDERING = ("record", "wait", "wait_tensor")


def _stream_enter(node: torch.fx.Node) -> bool:
    return node.args[0:1] != () and "_user_stream_label" in node.args[0]


def _op(node: torch.fx.Node) -> str | None:
    found = op_name(node.target) if node.op == "call_function" else None
    return None if found is None else found[1]


def ge_sync_nodes(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    """The stream switches and ordering calls of a GE stand-in graph, in program order."""
    return [n for n in gm.graph.nodes if _op(n) in _ORDERING or (_op(n) == "scope_enter" and _stream_enter(n))]


def _exit_of(enter: torch.fx.Node) -> torch.fx.Node:
    depth, node = 0, enter.next
    while _op(node) != "scope_exit" or depth:
        depth += {"scope_enter": 1, "scope_exit": -1}.get(_op(node) or "", 0)
        node = node.next
    return node


def _drop(graph: torch.fx.Graph, node: torch.fx.Node) -> None:
    name = _op(node)
    if name == "record":
        for wait in list(node.users):
            left = [t for t in wait.args[0] if t is not node]
            wait.args = (left,) if left else wait.args
            if not left:
                graph.erase_node(wait)
    elif name == "wait_tensor":
        node.replace_all_uses_with(node.args[0])
    elif name == "scope_enter":
        graph.erase_node(_exit_of(node))
    graph.erase_node(node)


def _lowered(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    return standins.lower(standins.copy_graph(gm), "ge")


def _without(gm: torch.fx.GraphModule, index: int) -> torch.fx.GraphModule:
    copy = standins.copy_graph(gm)
    _drop(copy.graph, ge_sync_nodes(copy)[index])
    copy.recompile()
    return copy


def _line(node: torch.fx.Node) -> str:
    """The line of the model's code that made the call (the last frame outside the stand-ins)."""
    lines = [line.strip() for line in (node.meta.get("stack_trace") or "").splitlines() if line.strip()]
    frames = [(where, code) for where, code in zip(lines, lines[1:]) if where.startswith("File ")]
    own = [code for where, code in frames if "standins" not in where]
    return own[-1] if own else ""


def _describe(node: torch.fx.Node) -> str:
    name = "npu_stream_switch" if _op(node) == "scope_enter" else _op(node)
    return f"{name}() at `{_line(node)}`"


def _fork_edges(gm: torch.fx.GraphModule) -> set[torch.fx.Node]:
    """The waits that open a side block (only core limits before them) on work of another stream: forks."""
    scopes: list[str | None] = []  # a stream's label, or None for another scope
    stream_of: dict[torch.fx.Node, str] = {}
    forks, opening = set(), False
    for node in gm.graph.nodes:
        here = next((label for label in reversed(scopes) if label is not None), "default")
        stream_of[node] = here
        name = _op(node)
        if name in ("wait", "wait_tensor") and opening and here != "default":
            ends = node.args[0] if name == "wait" else [node.args[1]]
            if any(stream_of.get(end) != here for end in ends):
                forks.add(node)
        if name == "scope_enter":
            scopes.append(dict(zip(node.args[0], node.args[1])).get("_user_stream_label"))
        elif name == "scope_exit":
            scopes.pop()
        opening = (name == "scope_enter" and _stream_enter(node)) or (opening and name == "scope_enter")
    return forks


def _earlier_exit(enter: torch.fx.Node) -> torch.fx.Node | None:
    node = enter.prev
    while node.op != "root" and not (runtime_op(node) == "stream_exit" and node.args[0] == enter.args[0]):
        node = node.prev
    return None if node.op == "root" else node


def _waits_inside(enter: torch.fx.Node) -> bool:
    """The block waits, anywhere in it, for an event recorded since its stream's earlier block ended: what GE
    orders by data at the first reader, the block could not have issued in that earlier block."""
    since, node, recorded = _earlier_exit(enter), enter, set()
    while since is not None and node is not since:
        if runtime_op(node) == "event_record":
            recorded.add(node.args[0])
        node = node.prev
    end, node = _sync_exit(enter), enter.next
    while node is not end:
        if runtime_op(node) == "event_wait" and node.args[0] in recorded:
            return True
        node = node.next
    return False


def _sync_exit(enter: torch.fx.Node) -> torch.fx.Node:
    depth, node = 0, enter.next
    while runtime_op(node) != "stream_exit" or depth:
        depth += {"stream_enter": 1, "stream_exit": -1}.get(runtime_op(node) or "", 0)
        node = node.next
    return node


def _ge_switch_reason(enter: torch.fx.Node) -> tuple[bool, str]:
    needed, why = switch_reason(enter)
    if not needed and why.startswith("it waits for nothing") and _waits_inside(enter):
        return True, "it reads what another stream made after its stream's earlier block"
    return needed, why


def ge_drops(gm: torch.fx.GraphModule) -> list[Drop]:
    """Each GE sync call of the stand-in graph ``gm``, dropped alone: is it needed?"""
    lowered, forks = _lowered(gm), _fork_edges(gm)
    enters = iter([n for n in lowered.graph.nodes if runtime_op(n) == "stream_enter"])
    found = []
    for index, node in enumerate(ge_sync_nodes(gm)):
        enter = next(enters) if _op(node) == "scope_enter" else None
        races = find_races(_lowered(_without(gm, index)))
        if races:
            needed, why = True, races[0].splitlines()[0]
        elif node in forks:
            needed, why = True, "the fork (CONTRACT section 2): part of the schedule, one edge per fork point"
        elif enter is not None:
            needed, why = _ge_switch_reason(enter)
        else:
            needed, why = False, "no race without it"
        found.append(Drop(index, _describe(node), needed, why))
    return found


def capture_ge(model: torch.nn.Module, inputs: tuple[Any, ...]) -> tuple[torch.fx.GraphModule, Any]:
    """The stand-in graph of ``model`` compiled for GE with the race checker, and the outputs (a race raises)."""
    graphs: list[torch.fx.GraphModule] = []
    torch._dynamo.reset()
    with standins.installed("ge"), torch.no_grad():
        backend: Callable[..., Any] = standins.checking_backend("ge", seen=graphs.append)
        outputs = torch.compile(model, backend=backend, fullgraph=True)(*inputs)
    if len(graphs) != 1:
        raise AssertionError(f"{len(graphs)} graphs: the GE hand version must be captured whole")
    return standins.copy_graph(graphs[0]), outputs
