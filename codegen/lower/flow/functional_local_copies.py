"""Whether a write through a parameter's name lands on a copy the body made of it, not on the caller's tensor.

``F.gaussian_nll_loss(input, target, var)`` runs ``var = var.clone()`` and then, under ``no_grad``, ``var.clamp_(min=
eps)``: the clamp writes the clone, and the caller's ``var`` is only read. A write through ``name`` lands on a copy
where an assignment ``name = <copy>`` runs before it on every path (the assignment is an earlier statement of a block
that holds the write, or holds a statement holding it) and no other statement binds ``name`` after that assignment,
anywhere in the body (a later one could reach the write through a loop). A copy is arithmetic or a call of a tensor
method whose ATen schema neither writes nor aliases ``self`` (``clone``, ``clamp``; not ``contiguous``, whose schema
returns ``Tensor(a)``: it may be ``self``); a view, a function of ``torch`` (``torch.unsqueeze(var, -1)``) or a method
the schemas lack may be the caller's memory still.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from codegen.lower.flow import schema

__all__ = ["copied_before"]

_BLOCKS = ("body", "orelse", "finalbody")


def copied_before(fn: ast.FunctionDef, name: str, node: ast.AST) -> bool:
    """``name`` holds a copy of its own wherever ``node`` (in ``fn``'s body) runs (see above)."""
    binding = _dominating(fn, name, node)
    if binding is None or not _copy(binding.value):
        return False
    after = (binding.lineno, binding.col_offset)
    return not any(_bound(n, name) and (n.lineno, n.col_offset) > after for n in ast.walk(fn) if _name(n))


def _dominating(fn: ast.FunctionDef, name: str, node: ast.AST) -> ast.Assign | None:
    """The last statement binding ``name`` that runs before ``node`` on every path, if an ``name = value``."""
    parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    child: ast.AST = node
    while child is not fn:
        parent = parents[id(child)]
        for block in (getattr(parent, field, None) for field in _BLOCKS):
            if isinstance(block, list) and child in block:
                earlier = [s for s in block[: block.index(child)] if _binds(s, name)]
                if earlier:
                    last = earlier[-1]
                    return last if isinstance(last, ast.Assign) and _single(last, name) else None
        child = parent
    return None


def _single(stmt: ast.Assign, name: str) -> bool:
    return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name


def _binds(stmt: ast.AST, name: str) -> bool:
    return any(_bound(n, name) for n in ast.walk(stmt))


def _bound(node: ast.AST, name: str) -> bool:
    return _name(node) and node.id == name and not isinstance(node.ctx, ast.Load)


def _name(node: ast.AST) -> TypeGuard[ast.Name]:
    return isinstance(node, ast.Name)


def _copy(value: ast.expr) -> bool:
    """``value`` makes a tensor of its own: arithmetic, or a method whose ATen op neither writes nor views ``self``."""
    if isinstance(value, (ast.BinOp, ast.UnaryOp)):
        return True
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    if isinstance(value.func.value, ast.Name) and value.func.value.id in ("torch", "_VF", "F"):
        return False
    method = value.func.attr
    return schema.writes_self(method) is False and not schema.aliases_self(method)
