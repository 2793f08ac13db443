"""Which statements only copy references or take views: they run no kernel, and their targets hold what they copy.

``a = b``, ``a, b = c, d``, ``t = (a, b)`` and ``a = b.squeeze(-1)`` (an op whose ATen schema returns a view of
``self``, with constant arguments, ``schema.py``) read no data: a pending result they copy needs no join there,
and the names they bind hold it too (:mod:`~codegen.lower.flow.transfer`). Only names count as targets: a store
through a subscript or an attribute (``t[0] = q``, ``out[k] = q``, ``self.stash = q``) runs a copy kernel when
its object is a tensor, and otherwise leaves the value where a later read (``out[k] * 3``, ``self.stash``) names
something else; either way the value is read there.
"""

from __future__ import annotations

import ast
from collections.abc import Set

from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.paths_meet import under
from codegen.lower.flow.schema import views_self

__all__ = ["alias_groups", "aliasing", "rerooted", "views_of"]


def aliasing(stmt: ast.stmt) -> tuple[list[str], list[str]] | None:
    """``a = b`` / ``a, b = c, d`` / ``t = (a, b)`` / ``a = b.squeeze(-1)``: (targets, sources) when the statement
    only copies references or takes views (an op whose schema returns views of ``self``: no kernel reads data)."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not _names_only(stmt.targets[0]):
        return None
    target, value = stmt.targets[0], stmt.value
    sources = [_viewed_name(s) for s in (value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value])]
    if not all(sources):
        return None
    return sorted(bound_names(target)), sources  # type: ignore[return-value]


def _names_only(target: ast.expr) -> bool:
    """``a`` or ``a, (b, *c)``: the target binds names and stores nothing into an object."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_names_only(e) for e in target.elts)
    if isinstance(target, ast.Starred):
        return _names_only(target.value)
    return isinstance(target, ast.Name)


def views_of(stmt: ast.stmt, made: Set[str]) -> bool:
    """``stmt`` binds views (or copies of references) of ``made`` only: it runs no kernel."""
    alias = aliasing(stmt)
    return alias is not None and set(alias[1]) <= made


def _viewed_name(node: ast.expr) -> str | None:
    """The name ``node`` is, or takes views of with constant arguments (``x.squeeze(-1).t()``, ``x[0, :2]``)."""
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Subscript) and _constant(node.slice):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and views_self(node.func.attr):
            if not all(_constant(a) for a in [*node.args, *(k.value for k in node.keywords)]):
                return None
            node = node.func.value
        else:
            return None
    return node.id


def _constant(node: ast.expr) -> bool:
    """A constant, a slice or tuple of them, or a minus sign on one (``-1``, ``:2``, ``(0, ...)``)."""
    return all(
        isinstance(n, (ast.Constant, ast.Slice, ast.Tuple, ast.UnaryOp, ast.USub, ast.Load)) for n in ast.walk(node)
    )


def alias_groups(stmt: ast.stmt) -> list[tuple[frozenset[str], frozenset[str]]]:
    """:func:`aliasing`'s targets and sources, paired one by one where a tuple of names is unpacked from a tuple of
    the same length (``a, b = q, g``: ``a`` holds ``q`` only), as one group otherwise."""
    alias = aliasing(stmt)
    if alias is None:
        return []
    target, value = stmt.targets[0], stmt.value  # type: ignore[attr-defined]
    pairs = isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
    if pairs and len(target.elts) == len(value.elts) and all(isinstance(e, ast.Name) for e in target.elts):
        return [(frozenset({t.id}), frozenset({s})) for t, s in zip(target.elts, alias[1])]
    return [(frozenset(alias[0]), frozenset(alias[1]))]


def rerooted(names: frozenset[str], targets: frozenset[str], sources: frozenset[str]) -> set[str]:
    """A pending call's paths of state under a copied object, under its alias as well (``me = self`` after a call
    writing ``self.acc``: ``me.acc``, read by ``peek(me)``); every attribute of the alias where it holds more than
    the one object (``t = (self, x)``: ``t.*``)."""
    parts = {n[len(s) :] for n in names for s in sources if under(n, s)}
    if not parts:
        return set()
    if len(targets) == 1 and len(sources) == 1:
        return {t + part for t in targets for part in parts}
    return {f"{t}.*" for t in targets}
