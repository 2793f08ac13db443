"""A node that cannot run on ``meta`` judged by the schemas its name has in the operator registry.

``torch.ops.aten.<name>`` lists every overload of an op with its alias
annotations. Every overload that the node's arguments fill (each slot without a
default given) counts (the union, so that a doubt becomes a write): a tensor in a ``Tensor(a!)`` slot is written; a
result annotated ``Tensor(a)`` makes the node a view of its first argument (a ``Tensor(a!)`` result is the written
argument handed back, never a view, even where that slot holds no tensor of the graph);
every other tensor argument is read. An op unknown to the registry reads all of
its tensor arguments and writes the one passed as ``out=`` (torch's convention).
"""

from __future__ import annotations

import functools
from typing import Any

import torch
import torch.fx

__all__ = ["by_schema"]


def _name(node: torch.fx.Node) -> str:
    if node.op == "call_method":
        return str(node.target)
    return getattr(node.target, "__name__", "")


@functools.cache
def _overloads(name: str) -> tuple[Any, ...]:
    try:
        packet = getattr(torch.ops.aten, name) if name.isidentifier() else None
    except (AttributeError, RuntimeError):
        return ()
    return tuple(getattr(packet, overload) for overload in packet.overloads()) if packet is not None else ()


def _fits(schema: Any, node: torch.fx.Node) -> bool:
    """The node's arguments fill the overload: none beyond its slots, and every slot without a default given (an
    ``.out`` overload fits only a call passing ``out=``: its ``Tensor(a!)`` result made a plain call a view)."""
    names = {a.name for a in schema.arguments}
    if len(node.args) > len(schema.arguments) or not set(node.kwargs) <= names:
        return False
    given = _slots(schema, node)
    return all(a.name in given or a.has_default_value() for a in schema.arguments)


def _slots(schema: Any, node: torch.fx.Node) -> dict[str, Any]:
    return dict(zip((a.name for a in schema.arguments), node.args)) | dict(node.kwargs)


def _nodes(value: Any) -> list[torch.fx.Node]:
    if isinstance(value, torch.fx.Node):
        return [value]
    return [v for v in value if isinstance(v, torch.fx.Node)] if isinstance(value, (tuple, list)) else []


def by_schema(node: torch.fx.Node, inputs: list[torch.fx.Node]) -> dict[str, Any]:
    """The effect the registry's schemas give ``node``: ``reads``, ``writes``, ``aliases``, ``random``."""
    overloads = [o for o in _overloads(_name(node)) if _fits(o._schema, node)]
    schemas = [o._schema for o in overloads]
    writes = [
        n
        for s in schemas
        for a in s.arguments
        if a.alias_info is not None and a.alias_info.is_write
        for n in _nodes(_slots(s, node).get(a.name))
    ]
    writes += _nodes(node.kwargs.get("out")) if not schemas else []
    view = not writes and any(
        r.alias_info is not None and not r.alias_info.is_write for s in schemas for r in s.returns
    )
    first = inputs[0] if inputs and node.args and node.args[0] is inputs[0] else None
    reads = () if view else tuple(n for n in inputs if n not in writes)
    alias = first if view else (writes[0] if writes else None)
    random = any(torch.Tag.nondeterministic_seeded in o.tags for o in overloads)
    return {"reads": reads, "writes": tuple(dict.fromkeys(writes)), "aliases": alias, "random": random}
