"""Count the synchronization calls one forward issues, read off the graph ``torch.compile`` captured of it.

A captured graph is one forward in program order, so its nodes are the calls the
forward made. What counts, per target (core limits never do):

| kind | portable, cuda, npugraph_ex (runtime ops) | aclgraph, ge (torchair stand-in ops) |
| --- | --- | --- |
| switch | ``stream_enter`` from ``runtime.stream`` / ``with torch.*.stream(s)`` | ``scope_enter`` with ``_user_stream_label`` |
| record | ``event_record`` (``runtime.record``, ``Event.record``) | ``tagged_event_record``, ``torchair.ops.record`` |
| wait | ``event_wait`` (``runtime.wait``, ``wait_event``, ``Event.wait``) | ``tagged_event_wait``, ``npu_wait_tensor``, ``torchair.ops.wait`` |
| record_stream | ``record_stream`` | ``npu_record_tagged_stream`` |

The native stand-ins (:mod:`npudsl.testing.standins`) wrap an ``Event.record(s)``
or ``s.wait_event(e)`` on a stream that is not current in a ``stream_enter`` of
their own (``Device.enter``): that enter is part of the one call, not a switch.
``s.wait_stream(t)`` is an event recorded on ``t`` and waited on ``s``: two calls,
as a portable ``record``/``wait`` pair is.
"""

from __future__ import annotations

from collections import Counter

import torch.fx

__all__ = ["KINDS", "count_graph", "total"]

KINDS = ("switch", "record", "wait", "record_stream")

_RUNTIME = {"stream_enter": "switch", "event_record": "record", "event_wait": "wait", "record_stream": "record_stream"}
_TORCHAIR = {
    "tagged_event_record": "record",
    "record": "record",
    "tagged_event_wait": "wait",
    "wait": "wait",
    "wait_tensor": "wait",
    "record_tagged_stream": "record_stream",
    "record_tagged_stream_": "record_stream",
}


def _op(node: torch.fx.Node) -> tuple[str, str] | None:
    """(namespace, name) of a custom op node, e.g. ("npudsl", "event_wait")."""
    if node.op != "call_function":
        return None
    packet = getattr(node.target, "overloadpacket", node.target)
    name = getattr(packet, "_qualified_op_name", None)
    if not isinstance(name, str) or "::" not in name:
        return None
    space, op = name.split("::", 1)
    return space, op


def _inside_device_enter(node: torch.fx.Node) -> bool:
    """A ``stream_enter`` the native stand-in issued around one event call (see the module docstring)."""
    frames = [line.strip() for line in (node.meta.get("stack_trace") or "").splitlines() if line.strip()]
    calls = [line for line in frames if line.startswith("File ")]
    return bool(calls) and calls[-1].endswith(", in enter")


def _kind(node: torch.fx.Node) -> str | None:
    found = _op(node)
    if found is None:
        return None
    space, op = found
    if space == "npudsl":
        kind = _RUNTIME.get(op)
        return None if kind == "switch" and _inside_device_enter(node) else kind
    if space == "standin_air":
        if op == "scope_enter":
            return "switch" if "_user_stream_label" in node.args[0] else None
        return _TORCHAIR.get(op)
    return None


def count_graph(gm: torch.fx.GraphModule) -> Counter[str]:
    """How many calls of each of :data:`KINDS` the graph ``gm`` holds."""
    found: Counter[str] = Counter({kind: 0 for kind in KINDS})
    for node in gm.graph.nodes:
        kind = _kind(node)
        if kind is not None:
            found[kind] += 1
    return found


def total(counts: Counter[str]) -> int:
    return sum(counts[kind] for kind in KINDS)
