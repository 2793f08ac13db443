"""Which nodes of a captured graph share memory, and which write it in place.

A *view* (``x.view(...)``, ``x[..., :k]``, ``x.transpose(0, 1)``, ``getitem`` of a
multi-output op, ...) makes no new memory: it stands for the allocation of its
first argument, its *root*. A *maybe-view* (``reshape``, ``contiguous``, ``to``...)
may copy or not, so it is taken as both: it reads its argument, and its result
aliases it. A *write* is an in-place op (``x.add_(1)``, ``x[0] = v``, ``x += v`` on a
tensor, ``out=``, ``inplace=True``); it writes its target's root and returns an alias of it.
"""

from __future__ import annotations

import operator

import torch
import torch.fx

__all__ = ["is_clone", "is_maybe_view", "is_metadata", "is_tensor", "is_view", "root", "written"]

_VIEWS = frozenset({
    "view", "view_as", "transpose", "swapaxes", "swapdims", "t", "permute", "expand", "expand_as", "squeeze",
    "unsqueeze", "narrow", "select", "unfold", "as_strided", "split", "split_with_sizes", "chunk", "unbind",
    "tensor_split", "diagonal", "detach", "movedim", "moveaxis", "unflatten", "real", "imag", "view_as_real",
    "view_as_complex", "alias",
})
_MAYBE_VIEWS = frozenset({
    "reshape", "reshape_as", "flatten", "contiguous", "to", "type", "type_as", "float", "half", "bfloat16",
    "double", "int", "long", "bool",
})
_METADATA = frozenset({
    "size", "dim", "stride", "numel", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset",
    "storage_offset", "is_contiguous", "element_size", "ndimension", "nelement",
})
# ``x += y`` and friends: in place when ``x`` is a tensor (dynamo keeps them as ``operator.i*``).
_AUGMENTED = frozenset({
    operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv, operator.imod,
    operator.ipow, operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift,
    operator.imatmul,
})
# In-place ops that change a tensor's metadata, not its memory.
_METADATA_WRITES = frozenset({"transpose_", "t_", "squeeze_", "unsqueeze_", "resize_", "as_strided_", "requires_grad_"})


def _name(node: torch.fx.Node) -> str:
    """The op's short name: the method name, or the function's ``__name__``."""
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_function":
        return getattr(node.target, "__name__", "").split(".")[0]
    return ""


def _first(node: torch.fx.Node) -> torch.fx.Node | None:
    argument = node.args[0] if node.args else None
    return argument if isinstance(argument, torch.fx.Node) else None


def is_tensor(node: torch.fx.Node) -> bool:
    """The node's value is a tensor or holds tensors (unknown values count as tensors)."""
    value = node.meta.get("example_value", node.meta.get("val"))
    if value is None:
        return True
    if isinstance(value, (tuple, list)):
        return any(isinstance(item, torch.Tensor) for item in value)
    return isinstance(value, torch.Tensor)


def is_view(node: torch.fx.Node) -> bool:
    """``node`` only re-describes its first argument's memory (no data is read)."""
    if node.op == "call_function" and node.target is operator.getitem:
        # x[idx] with a tensor index gathers into new memory
        return _first(node) is not None and not any(is_tensor(n) for n in node.all_input_nodes[1:])
    return node.op in ("call_method", "call_function") and _name(node) in _VIEWS and _first(node) is not None


def is_maybe_view(node: torch.fx.Node) -> bool:
    """``node`` may return its first argument's memory or a copy of it."""
    return node.op in ("call_method", "call_function") and _name(node) in _MAYBE_VIEWS and _first(node) is not None


def is_metadata(node: torch.fx.Node) -> bool:
    """``x.size()`` and friends: they read a tensor's description, not its memory."""
    return node.op in ("call_method", "call_function") and _name(node) in _METADATA


def is_clone(node: torch.fx.Node) -> bool:
    """``x.clone()`` / ``torch.clone(x)``: what ``@keep_output(clone=True)`` generates."""
    return node.op in ("call_method", "call_function") and _name(node) == "clone"


def written(node: torch.fx.Node) -> torch.fx.Node | None:
    """The node whose memory ``node`` writes in place, or ``None``."""
    if node.op not in ("call_method", "call_function"):
        return None
    out = node.kwargs.get("out")
    if isinstance(out, torch.fx.Node):
        return out
    name = _name(node)
    in_place = node.target is operator.setitem or node.kwargs.get("inplace") is True or (
        name.endswith("_") and not name.startswith("_") and name not in _METADATA_WRITES
    )
    if node.target in _AUGMENTED:  # on a number it makes a new number
        in_place = _first(node) is not None and is_tensor(_first(node))
    return _first(node) if in_place else None


def root(node: torch.fx.Node) -> torch.fx.Node:
    """The node that allocated the memory ``node`` stands for (through views and in-place results)."""
    while True:
        base = _first(node) if (is_view(node) or is_maybe_view(node)) else written(node)
        if base is None:
            return node
        node = base
