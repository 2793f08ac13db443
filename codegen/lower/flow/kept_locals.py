"""A keep named through an object, spelled through the caller's locals that hold the start of it.

``state_keeps.py`` names a tensor from the callee's side (``self.experts.token_dispatchers[i].topk_weights``);
vllm_qwen3_dbo's caller binds ``token_dispatchers = self.experts.token_dispatchers`` at the top of its body and
spells every use through it, as a careful engineer writing the keep by hand would: the keep reads the same.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.spelling import spelled_expr

__all__ = ["through_locals"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def through_locals(fn: _Function, call: ast.Call, keeps: tuple[str, ...]) -> tuple[str, ...]:
    """``keeps`` spelled through the caller's locals where one holds the start of a keep: ``token_dispatchers =
    self.experts.token_dispatchers`` at the top of ``fn``, before the call, bound nowhere else, makes
    ``self.experts.token_dispatchers[i].topk_weights`` read ``token_dispatchers[i].topk_weights`` (unless ``fn``
    stores that chain itself, or a part of it)."""
    if not keeps:
        return keeps
    stored = [n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load)]
    held: dict[str, str] = {}
    for stmt in fn.body:
        if stmt.lineno >= call.lineno or not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        if isinstance(target, ast.Name) and stored.count(target.id) == 1 and _attributes(stmt.value):
            held[spelled_expr(stmt.value)] = target.id
    targets = [spelled_expr(t) for t in walked_of(fn, ast.Attribute) if not isinstance(t.ctx, ast.Load)]
    held = {text: name for text, name in held.items() if not any(t.startswith(text) for t in targets)}
    return tuple(_respelled(k, held) for k in keeps)


def _respelled(keep: str, held: dict[str, str]) -> str:
    for text, name in held.items():
        if keep.startswith(f"{text}["):
            return name + keep[len(text) :]
    return keep


def _attributes(node: ast.expr) -> bool:
    """A chain of attributes of a name (``self.experts.token_dispatchers``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
