"""Stand-ins on ``meta`` for the values a node of a captured graph takes: shapes and layouts, no data.

Each argument node becomes what its example value (``example_value``/``val``, or
the module's own attribute for ``get_attr``) looks like: a tensor becomes an empty
``meta`` tensor with its shape, strides and dtype; a tuple or list of tensors, one
of those per item; a symbolic size, its hint. Anything else cannot stand in, and
the node is judged by its schemas instead (:class:`Unrunnable`).
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx
from torch.utils._pytree import tree_map

__all__ = ["Unrunnable", "example", "metas"]


class Unrunnable(Exception):
    """A node whose arguments cannot be rebuilt on ``meta``."""


def example(node: torch.fx.Node) -> Any:
    """The node's example value (``None`` when unknown)."""
    if "example_value" in node.meta or "val" in node.meta:
        return node.meta.get("example_value", node.meta.get("val"))
    module = node.graph.owning_module
    if node.op == "get_attr" and module is not None:
        try:
            return operator.attrgetter(str(node.target))(module)
        except AttributeError:
            return None
    return None


def _int(value: Any) -> int:
    if isinstance(value, torch.SymInt):
        hint = value.node.hint
        if hint is None:
            raise Unrunnable("a size without a hint")
        return int(hint)
    return int(value)


def _tensor(value: torch.Tensor) -> torch.Tensor:
    shape, stride = [_int(s) for s in value.shape], [_int(s) for s in value.stride()]
    return torch.empty_strided(shape, stride, dtype=value.dtype, device="meta")


def _stand_in(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return _tensor(value)
    if isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in value):
        return type(value)(_stand_in(v) for v in value) if isinstance(value, tuple) else [_stand_in(v) for v in value]
    if isinstance(value, torch.SymInt):
        return _int(value)
    if isinstance(value, (torch.SymFloat, torch.SymBool)) or value is None:
        raise Unrunnable("no concrete example value")
    return value


def metas(node: torch.fx.Node, inputs: list[torch.fx.Node]) -> tuple[Any, Any, list[list[torch.Tensor]]]:
    """``node``'s args and kwargs on ``meta``, and per input node the meta tensors standing for it."""
    values = {n: _stand_in(example(n)) for n in inputs}
    groups = [
        [v for v in (values[n] if isinstance(values[n], (tuple, list)) else [values[n]]) if isinstance(v, torch.Tensor)]
        for n in inputs
    ]
    args, kwargs = tree_map(lambda a: values[a] if isinstance(a, torch.fx.Node) else a, (node.args, node.kwargs))
    return args, kwargs, groups
