"""Results stored into items of a Python list or dict the caller owns: ``xs[i] = self.side(...)`` binds them.

vllm-ascend's dual-batch overlap keeps each micro-batch's result in a list item
(``hidden_states[i] = self._forward_combine_comm(...)``). When ``xs`` is certainly a Python list or dict
and nothing but ``xs`` itself can reach it, the store only puts a reference in one of its slots, as ``y =
...`` binds a name: the caller can join the call later, before the first statement that reads ``xs`` (any
item: the analysis reads names, not indices). A *container* here is a local of the function that every
binding makes a list or dict and that nothing but the function reaches (:mod:`~codegen.lower.flow.own_containers`).
Anything else (a store into what may be a tensor, whose item store is a copy kernel) stays a use at once.

Storing into a container's item (``xs[j] = t``) writes no tensor memory: :mod:`~codegen.lower.flow.writes`
asks :func:`item_stored` which store targets of a statement are such slots. The facts of a function are
registered when its calls are searched (:func:`containers`, from ``callsites.py``), before any analysis of it.
"""

from __future__ import annotations

import ast
import weakref

from codegen.index.walked import per_node, walked, walked_of
from codegen.lower.flow.own_containers import own_containers

__all__ = ["container_item", "containers", "item_call", "item_names", "item_stored", "stored_only"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_PURE_INDEX = (ast.Name, ast.Constant, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.Slice)

_STORED: weakref.WeakKeyDictionary[ast.stmt, frozenset[str]] = weakref.WeakKeyDictionary()
_ITEMS: weakref.WeakKeyDictionary[ast.Subscript, str] = weakref.WeakKeyDictionary()


@per_node
def containers(fn: _Function) -> frozenset[str]:
    """The names of ``fn`` that certainly hold a list or dict only ``fn`` reaches (``own_containers.py``), its item
    stores registered."""
    found = own_containers(fn)
    if not found:
        return found
    for stmt in walked_of(fn, ast.stmt):
        stored = _item_targets(stmt, found)
        if stored:
            _STORED[stmt] = stored
    for node in walked_of(fn, ast.Subscript):
        if isinstance(node.value, ast.Name) and node.value.id in found:
            _ITEMS[node] = node.value.id
    return found


def container_item(node: ast.expr) -> bool:
    """``node`` is ``xs[k]`` for a container ``xs`` of its function: an object of its own, not a view of ``xs``."""
    return isinstance(node, ast.Subscript) and node in _ITEMS


def item_stored(stmt: ast.AST) -> frozenset[str]:
    """The containers ``stmt`` stores an item of directly (``xs[i] = t``: no tensor memory is written)."""
    return _STORED.get(stmt, frozenset()) if isinstance(stmt, ast.stmt) else frozenset()


def stored_only(stmt: ast.stmt) -> frozenset[str]:
    """The containers ``stmt`` names only to store an item of (``xs[i] = t``: Python loads ``xs`` to call its
    ``__setitem__``, which reads no item), not in its value, an index or another target."""
    stored = item_stored(stmt)
    if not stored:
        return stored
    slots = {id(n.value) for n in walked_of(stmt, ast.Subscript) if isinstance(n.ctx, ast.Store) and n in _ITEMS}
    named = [n for n in walked_of(stmt, ast.Name) if n.id in stored and id(n) not in slots]
    return stored - {n.id for n in named}


def item_call(stmt: ast.stmt, names: frozenset[str]) -> ast.Call | None:
    """The call an assignment binds to names and items of the containers ``names`` (at least one item), if
    that is all the statement does and no index calls anything."""
    if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call) or not names:
        return None
    slots = [_slots(target, names) for target in stmt.targets]
    if any(s is None for s in slots) or not any(slots):
        return None
    return stmt.value


def item_names(stmt: ast.stmt) -> frozenset[str]:
    """The containers an assignment of a call's result stores items of (their names hold the result)."""
    return item_stored(stmt)


def _slots(target: ast.expr, names: frozenset[str]) -> int | None:
    """How many container items ``target`` stores (None: it stores something else than names and items)."""
    if isinstance(target, ast.Name):
        return 0
    if isinstance(target, (ast.Tuple, ast.List)):
        found = [_slots(e, names) for e in target.elts]
        return None if any(f is None for f in found) else sum(f or 0 for f in found)
    return 1 if _item_of(target, names) else None


def _item_of(target: ast.expr, names: frozenset[str]) -> str | None:
    """``xs`` when ``target`` is ``xs[k]`` for a container ``xs`` and an index that calls nothing."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return None
    pure = all(isinstance(n, (*_PURE_INDEX, ast.operator, ast.unaryop, ast.expr_context)) for n in walked(target.slice))
    return target.value.id if target.value.id in names and pure else None


def _item_targets(stmt: ast.stmt, names: frozenset[str]) -> frozenset[str]:
    """The containers whose items ``stmt`` stores directly (plain, unpacked or chained targets), but those it
    also writes through an item (``xs[0][1] = t`` writes the tensor ``xs[0]``)."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or not names:
        return frozenset()
    targets: list[ast.expr] = list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]
    direct: set[str] = set()
    deeper: set[str] = set()
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            targets.extend(target.elts if not isinstance(target, ast.Starred) else [target.value])
        elif (name := _item_of(target, names)) is not None:
            direct.add(name)
        else:
            deeper |= {n.id for n in walked_of(target, ast.Name)}
    return frozenset(direct - deeper)
