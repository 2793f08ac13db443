"""Rewrite the stand-in torchair / npugraph_ex ops of a captured graph into npudsl's runtime ops.

The race checker (:mod:`npudsl.race`) reads ``torch.ops.npudsl.*``. This pass maps
each stand-in op onto them, in place, the way torchair itself reads the graph:

| stand-in op | runtime ops |
| --- | --- |
| ``scope_enter`` with ``_user_stream_label`` / its ``scope_exit`` | ``stream_enter(label, priority)`` / ``stream_exit(label)`` |
| ``scope_enter`` with ``_op_aicore_num`` / its ``scope_exit`` | ``core_limit_enter(aicore, vector)`` / ``core_limit_exit()`` |
| any other ``scope_enter`` (``super_kernel``) / its ``scope_exit`` | nothing |
| ``tagged_event_record(tag)`` / ``tagged_event_wait(tag)`` | ``event_record(tag)`` / ``event_wait(tag)`` |
| ``record_tagged_stream[_](t, tag)`` | ``record_stream(t, tag)`` |
| ``t = record()`` | ``event_record("record.<t>")`` where it stands; ``ge``: where the stream's last op is a view GE compiles to no kernel, the events a wait for that view reads (:mod:`._ge_views`), and none where the stream has issued no op yet (torchair's ``no_op_before_record``) |
| ``wait([t, ...])`` | ``event_wait`` of each token's event; a tensor that is no token gets ``event_record`` right after the op that made the value it holds at the wait and after the last in-place write of its memory before the wait (:mod:`._written`), as torchair's ``apply_event_record`` pass inserts ``record`` there |
| ``wait_tensor(self, dep)`` | ``event_record`` after ``dep``'s producer and its last in-place write (as for ``wait``), ``event_wait`` where the wait stands; uses of the result read ``self`` |

On ``ge`` the producer of a view that compiles to no kernel (``view``, ``squeeze``, ``detach``...) is the op
that made the viewed tensor (:mod:`._ge_views`): a wait for it orders after that op, wherever the view stands.

``wait_tensor`` is mapped as a wait of the whole stream at that point. GE orders
only the consumers of ``self`` after it, so the mapping is exact for those on
the waiting stream, and lenient for other work there that reads none of them.

Targets: ``aclgraph`` rejects ``wait_tensor`` (its kernel raises outside GE);
``ge`` rejects the tagged-event ops and ``record_tagged_stream`` (their GE
converters raise). GE plans memory itself, so for ``ge`` every cross-stream
read or in-place write (a functional op taking the value, in the graph GE compiles)
gets a ``record_stream`` for that stream (the checker's free rule is about the
caching allocator; :mod:`._data_edges`). GE also orders data edges: with
``data_edges="engine"`` (the default) every cross-stream read gets an
``event_record`` after its producer and an ``event_wait`` before its first reader
on each stream; ``"explicit"`` leaves those out, so that only the waits the code
states order anything (stricter than GE: it checks that the code says each
cross-stream dependency itself).
"""

from __future__ import annotations

import operator
from typing import Any, cast

import torch
import torch.fx

from npudsl.runtime._ops import OPS
from npudsl.testing.standins._data_edges import sync_data_edges
from npudsl.testing.standins._device import StandinError
from npudsl.testing.standins._ge_views import viewed
from npudsl.testing.standins._ops import op_name
from npudsl.testing.standins._written import last_write

__all__ = ["Lowering", "lower"]

_NOT_IN = {
    ("aclgraph", "wait_tensor"): "npu_wait_tensor is GE only: its kernel raises outside max-autotune",
    ("ge", "tagged_event_record"): "tagged events have no GE converter",
    ("ge", "tagged_event_wait"): "tagged events have no GE converter",
    ("ge", "record_tagged_stream"): "npu_record_tagged_stream has no GE converter",
    ("ge", "record_tagged_stream_"): "npu_record_tagged_stream has no GE converter",
}


def _source(node: torch.fx.Node, target: str) -> torch.fx.Node:
    """The op that makes ``node``: an element of an op's tuple result is made by that op; an index of a tensor
    (``table[positions]``, ``x[0]``, also ``operator.getitem`` in the graph) is an op of its own; on ``ge``, a view
    that compiles to no kernel is made by what made the viewed tensor."""
    while True:
        if _element(node):
            node = cast(torch.fx.Node, node.args[0])
        elif target == "ge" and (base := viewed(node)) is not None:
            node = base
        else:
            return node


def _element(node: torch.fx.Node) -> bool:
    """``node`` takes an element of an op's tuple result (no op of its own)."""
    return node.op == "call_function" and node.target is operator.getitem and not _tensor(node.args[0])


def _tensor(value: object) -> bool:
    return isinstance(value, torch.fx.Node) and isinstance(value.meta.get("example_value"), torch.Tensor)


class Lowering:
    def __init__(self, graph: torch.fx.Graph, target: str) -> None:
        self.graph, self.target = graph, target
        self.scopes: list[tuple[str, str]] = []  # ("stream", label) | ("core", "") | ("other", "")
        self.stream_of: dict[torch.fx.Node, str] = {}
        self.recorded: dict[torch.fx.Node, str] = {}  # producer -> the event recorded right after it
        self.tokens: dict[torch.fx.Node, list[str]] = {}  # record() -> the events a wait for it reads
        self.last_op: dict[str, torch.fx.Node | None] = {}  # stream -> its last op (None: one no view can be)

    @property
    def stream(self) -> str:
        return next((label for kind, label in reversed(self.scopes) if kind == "stream"), "default")

    def emit(self, op: str, args: tuple[Any, ...], like: torch.fx.Node) -> torch.fx.Node:
        node = self.graph.call_function(OPS[op].default, args)
        node.meta["stack_trace"] = like.meta.get("stack_trace")
        return node

    def replace(self, node: torch.fx.Node, op: str | None, *args: Any) -> None:
        if op is not None:
            with self.graph.inserting_before(node):
                self.emit(op, args, node)
        self.graph.erase_node(node)

    def visit(self, node: torch.fx.Node) -> None:
        self.stream_of[node] = self.stream
        found = op_name(node.target) if node.op == "call_function" else None
        if found is None:
            if node.op in ("call_function", "call_method", "call_module") and _tensor(node) and not _element(node):
                self.last_op[self.stream] = node
            return
        if found[1] == "wait_tensor":
            self.last_op[self.stream] = None  # an Identity with the wait's edge: orders where it stands
        reason = _NOT_IN.get((self.target, found[1]))
        if reason is not None:
            raise StandinError(f"target {self.target!r}: {reason} (graph node {node.name})")
        getattr(self, found[1].rstrip("_"))(node, *node.args)

    def scope_enter(self, node: torch.fx.Node, keys: list[str], values: list[str], *_: Any) -> None:
        attrs = dict(zip(keys, values))
        if "_user_stream_label" in attrs:
            label = attrs["_user_stream_label"]
            self.scopes.append(("stream", label))
            self.replace(node, "stream_enter", label, int(attrs.get("_user_stream_priority", 0)))
        elif "_op_aicore_num" in attrs:
            self.scopes.append(("core", ""))
            self.replace(node, "core_limit_enter", int(attrs["_op_aicore_num"]), int(attrs["_op_vectorcore_num"]))
        else:
            self.scopes.append(("other", ""))
            self.replace(node, None)

    def scope_exit(self, node: torch.fx.Node, *_: Any) -> None:
        if not self.scopes:
            raise StandinError(f"scope_exit without scope_enter (graph node {node.name})")
        kind, label = self.scopes.pop()
        if kind == "stream":
            self.replace(node, "stream_exit", label)
        else:
            self.replace(node, "core_limit_exit" if kind == "core" else None)

    def tagged_event_record(self, node: torch.fx.Node, tag: str, *_: Any) -> None:
        self.replace(node, "event_record", tag)

    def tagged_event_wait(self, node: torch.fx.Node, tag: str, *_: Any) -> None:
        self.replace(node, "event_wait", tag)

    def record_tagged_stream(self, node: torch.fx.Node, tensor: torch.fx.Node, tag: str) -> None:
        self.replace(node, "record_stream", tensor, tag)

    def record_after(self, tensor: torch.fx.Node) -> str:
        """The event recorded right after ``tensor``'s producer (inputs: after the last input)."""
        producer = _source(tensor, self.target)
        if producer not in self.recorded:
            inputs = [n for n in self.graph.nodes if n.op in ("placeholder", "get_attr")]
            anchor = inputs[-1] if producer.op in ("placeholder", "get_attr") else producer
            self.recorded[producer] = f"after.{producer.name}"
            with self.graph.inserting_after(anchor):
                self.emit("event_record", (self.recorded[producer],), producer)
        return self.recorded[producer]

    def events_of(self, tensor: torch.fx.Node, wait: torch.fx.Node) -> list[str]:
        """The events a wait for ``tensor`` at ``wait`` orders after: a token's own; else its producer's, and the
        last in-place write's of its memory before the wait (functionalization, :mod:`._written`)."""
        if tensor in self.tokens:
            return self.tokens[tensor]
        written = last_write(self.graph, tensor, wait)
        return [self.record_after(tensor), *([self.record_after(written)] if written is not None else [])]

    def wait_tensor(self, node: torch.fx.Node, tensor: torch.fx.Node, dependency: torch.fx.Node) -> None:
        with self.graph.inserting_before(node):
            for event in self.events_of(dependency, node):
                self.emit("event_wait", (event,), node)
        node.replace_all_uses_with(tensor)
        self.graph.erase_node(node)

    def record(self, node: torch.fx.Node, *_: Any) -> None:
        """A token orders on its stream's last op: where it stands, or on ``ge`` where that op is a view of no
        kernel, on what a wait for the view reads; on ``ge`` with no op before it on its stream, on nothing."""
        last = self.last_op.get(self.stream)
        if self.target == "ge" and self.stream not in self.last_op:
            self.tokens[node] = []
        elif self.target == "ge" and last is not None and viewed(last) is not None:
            self.tokens[node] = self.events_of(last, last)
        else:
            self.tokens[node] = [f"record.{node.name}"]
            with self.graph.inserting_before(node):
                self.emit("event_record", (self.tokens[node][0],), node)

    def wait(self, node: torch.fx.Node, tensors: list[torch.fx.Node]) -> None:
        with self.graph.inserting_before(node):
            for event in (e for tensor in tensors for e in self.events_of(tensor, node)):
                self.emit("event_wait", (event,), node)
        self.graph.erase_node(node)
        for token in tensors:
            if op_name(token.target) is not None and not token.users:
                self.graph.erase_node(token)


def lower(gm: torch.fx.GraphModule, target: str, *, data_edges: str | None = None) -> torch.fx.GraphModule:
    """Rewrite ``gm`` in place for ``target`` (see the module docstring) and return it.

    ``data_edges`` (``ge`` only): ``"engine"`` (the default) or ``"explicit"``.
    """
    if data_edges not in (None, "engine", "explicit") or (data_edges is not None and target != "ge"):
        raise ValueError(f"data_edges is 'engine' or 'explicit', for target 'ge' only (not {data_edges!r})")
    walk = Lowering(gm.graph, target)
    for node in list(gm.graph.nodes):
        walk.visit(node)
    if walk.scopes:
        raise StandinError(f"scope_enter never closed in this graph: {walk.scopes[-1]}")
    if target == "ge":
        sync_data_edges(walk, order=data_edges != "explicit")
    gm.graph.lint()
    gm.recompile()
    return gm
