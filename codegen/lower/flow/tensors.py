"""Which expressions certainly evaluate to one tensor, given the names known to hold tensors.

GE's fork edge, ``npu_wait_tensor(a, b)``, takes two tensors: a flag, a shape, a tuple or a config object there
fails the capture. The caller's code carries no types, so an expression counts only when its value is certainly a
tensor: a name known to hold one (``tensor_bindings.py``), an arithmetic or slice of one, a tensor method or
``torch.*`` function whose ATen schema returns one tensor (``schema.py``), or a call of a function annotated to
return one, or a constant index of one annotated to return a tuple (the annotations the caller can see:
``local_returns.py``). Anything else (calls the module cannot see, flags) is not.
"""

from __future__ import annotations

import ast

from codegen.frontend.signature import Tensorness, annotation_tensorness
from codegen.index.unparsed import unparsed
from codegen.lower.flow import schema

__all__ = ["Known", "Returns", "is_tensor_expr", "tensor_callable", "tuple_element", "tuple_elements"]

Known = frozenset[str] | set[str]
Returns = dict[str, ast.expr]  # a callable as spelled in the caller -> its return annotation

# Python-level names that the ATen table does not hold and that return no tensor (``x.tolist()``, ``torch.finfo``).
_NOT_ATEN = frozenset(
    {
        "Size",
        "compile",
        "cuda",
        "data_ptr",
        "device",
        "dtype",
        "finfo",
        "get_default_dtype",
        "iinfo",
        "is_tensor",
        "nelement",
        "no_grad",
        "npu",
        "tolist",
    }
)
_TORCH_ROOTS = frozenset({"torch", "F"})
_TUPLES = ("tuple", "typing.Tuple", "Tuple")


def is_tensor_expr(node: ast.expr, known: Known, returns: Returns) -> bool:
    """``node`` certainly evaluates to one tensor, given the names ``known`` to hold tensors."""
    if isinstance(node, ast.Name):
        return node.id in known
    if isinstance(node, ast.BinOp):
        return is_tensor_expr(node.left, known, returns) or is_tensor_expr(node.right, known, returns)
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return is_tensor_expr(node.operand, known, returns)
    if isinstance(node, ast.Subscript) and tuple_element(node, returns) is not None:
        return annotation_tensorness(tuple_element(node, returns)) is Tensorness.TENSOR
    if isinstance(node, ast.Subscript):
        return is_tensor_expr(node.value, known, returns)
    if isinstance(node, ast.IfExp):
        return is_tensor_expr(node.body, known, returns) and is_tensor_expr(node.orelse, known, returns)
    if isinstance(node, ast.Call) and unparsed(node.func) in returns:
        return annotation_tensorness(returns[unparsed(node.func)]) is Tensorness.TENSOR
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _one_tensor(node.func.attr) and tensor_callable(node.func.value, known, returns)
    return False


def tuple_elements(call: ast.expr, returns: Returns) -> list[ast.expr] | None:
    """The element annotations of a call annotated ``-> tuple[...]``, as written; None for any other."""
    annotation = returns.get(unparsed(call.func)) if isinstance(call, ast.Call) else None
    if not isinstance(annotation, ast.Subscript) or unparsed(annotation.value) not in _TUPLES:
        return None
    return annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]


def tuple_element(node: ast.Subscript, returns: Returns) -> ast.expr | None:
    """The annotation of ``call(...)[i]``, a constant index of a call annotated ``-> tuple[...]``."""
    elements = tuple_elements(node.value, returns)
    index = node.slice.value if isinstance(node.slice, ast.Constant) else None
    if elements is None or not isinstance(index, int) or not -len(elements) <= index < len(elements):
        return None
    return None if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elements) else elements[index]


def _one_tensor(name: str) -> bool:
    """Its schema returns one tensor; a name outside the ATen table does unless it is a known Python-level one."""
    known = schema.one_tensor(name)
    return known if known is not None else name not in _NOT_ATEN


def tensor_callable(owner: ast.expr, known: Known, returns: Returns) -> bool:
    """``owner.<fn>(...)`` is a tensor method or a function of ``torch`` (``torch.nn.functional`` too)."""
    root = owner
    while isinstance(root, ast.Attribute):
        root = root.value
    torch_like = isinstance(root, ast.Name) and root.id in _TORCH_ROOTS
    return torch_like or is_tensor_expr(owner, known, returns)
