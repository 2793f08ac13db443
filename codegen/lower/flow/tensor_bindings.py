"""Which of a caller's locals certainly hold a tensor, read from how each is made.

The caller's locals carry no types, so a name counts only when every value it gets is certainly a tensor: a
parameter annotated ``torch.Tensor``, or an assignment of an expression that certainly evaluates to one
(``tensors.py``), or an element of a tuple unpacked from a call annotated to return tensors there (or a tensor
method that returns tensors only). A name bound anywhere else in the function to anything else is left out
everywhere: a later read of it may see that other value. GE puts its fork edge on such a name, or on an earlier
tensor, or not at all.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.frontend.signature import Tensorness, annotation_tensorness, signature_of
from codegen.index.walked import walked_of
from codegen.lower.flow import schema
from codegen.lower.flow.tensors import Known, Returns, is_tensor_expr, tensor_callable, tuple_elements

__all__ = ["certain_bindings", "certain_tensors", "in_order"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def certain_tensors(fn: _Function, *, method: bool, returns: Returns) -> dict[ast.stmt, str]:
    """Each assignment of ``fn`` that binds a certain tensor, with the last name it binds one to."""
    return {stmt: kept[-1] for stmt, kept in certain_bindings(fn, method=method, returns=returns).items()}


def certain_bindings(fn: _Function, *, method: bool, returns: Returns) -> dict[ast.stmt, list[str]]:
    """Each assignment of ``fn`` that binds certain tensors, with the names it binds them to.

    A name bound anywhere else in ``fn`` to anything that is not certainly a tensor (another assignment,
    a loop variable, ``with ... as``) is left out everywhere: a later read of it may see that other value.
    """
    known = {p.name for p in signature_of(fn, method=method).params if p.tensor is Tensorness.TENSOR}
    found: dict[ast.stmt, list[ast.Name]] = {}
    for stmt in in_order(fn.body):
        for target, tensor in _bindings(stmt, known, returns):
            if tensor:
                known.add(target.id)
                found.setdefault(stmt, []).append(target)
            else:
                known.discard(target.id)
    unsure = _bound_otherwise(fn, found)
    names = {stmt: [t.id for t in targets if t.id not in unsure] for stmt, targets in found.items()}
    return {stmt: kept for stmt, kept in names.items() if kept}


def _bound_otherwise(fn: _Function, found: dict[ast.stmt, list[ast.Name]]) -> set[str]:
    """The names ``fn`` binds or deletes anywhere but as a target of ``found``, a certain tensor's binding."""
    sure = {id(t) for targets in found.values() for t in targets}
    return {
        node.id
        for node in walked_of(fn, ast.Name)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in sure
    }


def _bindings(stmt: ast.stmt, known: Known, returns: Returns) -> list[tuple[ast.Name, bool]]:
    """The names a plain assignment binds, each with whether the value it gets is certainly a tensor."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
        target = stmt.target
        value = (
            ast.BinOp(left=stmt.target, op=stmt.op, right=stmt.value) if isinstance(stmt, ast.AugAssign) else stmt.value
        )
    else:
        return []
    if isinstance(target, ast.Name):
        return [(target, is_tensor_expr(value, known, returns))]
    if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        kinds = _tuple_kinds(value, len(target.elts), returns, known)
        return list(zip(target.elts, kinds))  # type: ignore[arg-type]
    return []


def _tuple_kinds(value: ast.expr, width: int, returns: Returns, known: Known = frozenset()) -> list[bool]:
    """Which elements of a call annotated ``-> tuple[...]`` (or of a tensor method that returns tensors only)
    are tensors."""
    func = value.func if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Attribute) and schema.tensors_only(func.attr):
        if tensor_callable(func.value, known, returns):
            return [True] * width
    elements = tuple_elements(value, returns)
    if elements is not None and len(elements) == width:
        return [annotation_tensorness(e) is Tensorness.TENSOR for e in elements]
    return [False] * width


def in_order(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements in source order, nested blocks included, not entering nested functions or classes."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                yield from in_order(block)
        for handler in getattr(stmt, "handlers", []):
            yield from in_order(handler.body)
