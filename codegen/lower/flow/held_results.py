"""Whether a caller holds a planned call's result until it returns: then it outlives every join of the call.

CONTRACT section 2 joins a call at the latest before its function returns, so a tensor the caller surely holds
from the call until it returns is alive past the side stream's last use of it: its memory needs no
``record_stream`` on that account (``returned_state.py`` asks, for a tensor the call hands back as it came).
Held means no path drops it: a name only the call's statement binds, outside loops, or a slot of a container of
the caller's own (``item_stores.py``) that only the call's statement stores into, the container bound once
outside loops and, where a loop runs the call, the slot's index a name only that one ``for ... in range(...)``
binds inside it (each iteration fills a slot of its own, the range's values being distinct). No call on the
stream reads the result either (a later call on its stream takes it for its own stream's, and keeps nothing).
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import loaded_names, scope_nodes
from codegen.lower.flow.item_stores import containers
from codegen.lower.flow.sites import Site

__all__ = ["holds_until_return"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def holds_until_return(fn: _Function, site: Site, slot: ast.expr, sites: list[Site]) -> bool:
    """``fn`` holds what the target ``slot`` of the call's statement gets until it returns, and no planned call on
    the call's stream (itself included) reads it."""
    name = _name(slot) or (_name(slot.value) if isinstance(slot, ast.Subscript) else "")
    if not name or any(s.tag == site.tag and name in loaded_names(s.call.call) for s in sites):
        return False
    loops = [loop for loop in walked_of(fn, _LOOPS) if _inside(site.stmt, loop) and loop is not site.stmt]
    if isinstance(slot, ast.Name):
        return not loops and _bindings(fn, name) == [slot]
    return isinstance(slot, ast.Subscript) and name in containers(fn) and _one_slot_each(fn, site.stmt, slot, loops)


def _one_slot_each(fn: _Function, stmt: ast.stmt, slot: ast.Subscript, loops: list[ast.stmt]) -> bool:
    """``xs[i] = call(...)`` is the only store into ``xs``, bound once outside loops, and inside the one ``for i in
    range(...)`` around it only that loop binds ``i`` (no loop: any index)."""
    name = _name(slot.value)
    stored = [n for n in walked_of(fn, ast.Subscript) if _name(n.value) == name and not isinstance(n.ctx, ast.Load)]
    bindings = _bindings(fn, name)
    looped = any(_inside(b, loop) for loop in walked_of(fn, _LOOPS) for b in bindings)
    if len(bindings) != 1 or looped or not all(_inside(n, stmt) for n in stored):
        return False
    if not loops:
        return True
    loop, index = loops[0], _name(slot.slice)
    if len(loops) != 1 or not isinstance(loop, ast.For) or not index or _name(loop.target) != index:
        return False
    ranged = isinstance(loop.iter, ast.Call) and _name(loop.iter.func) == "range"
    return ranged and [b for b in _bindings(fn, index) if _inside(b, loop)] == [loop.target]


def _bindings(fn: _Function, name: str) -> list[ast.AST]:
    """Every node of ``fn``'s own scope that binds or deletes ``name`` (a parameter; ``global``/``nonlocal`` too)."""
    nodes = scope_nodes(fn)
    found: list[ast.AST] = [
        n for n in nodes if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
    ]
    found += [n for n in nodes if isinstance(n, ast.arg) and n.arg == name]
    found += [n for n in walked_of(fn, (ast.Global, ast.Nonlocal)) if name in n.names]  # type: ignore[attr-defined]
    return found


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return any(n is node for n in ast.walk(outer))


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""
