"""GE: a call that reads only what its function was given (its parameters, its object's state) needs no fork edge.

Nothing it reads was made by the work its caller did before it in this function, so that work orders nothing it
needs: its inputs come from outside the function, and GE orders each of them after its producer by their data (as
where no op of the function runs before the call at all, ``ge_before.py``). Given means: a parameter the function
neither rebinds nor writes in place (``x.add_(1)``, ``x[0] = 0``, ``x += 1``, also through a view of it); the
object itself where the function writes none of its state; a local each binding of which takes a part of the
object's state by an integer count (``next_layer = self.layers[i + 1] if i + 1 < len(self.layers) else None``,
``i`` counting a loop over ``enumerate`` or ``range``): a submodule, a parameter or a view of one, made by no op
(counts and parts of the state are ``counted_state.py``'s reading, with its comparisons and choices).
A staging of the next layer's weights, issued inside the layer loop, reads only those. And a local each binding of
which takes views of a given tensor (``ge_views.py``), written by nothing in the function.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.counted_state import counted, loop_counts, state_part
from codegen.lower.flow.ge_views import binds, view_locals
from codegen.lower.flow.param_writes import param_writes
from codegen.lower.flow.sites import Site
from codegen.lower.flow.writes import inplace_writes

__all__ = ["reads_only_given", "state_untouched"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def reads_only_given(reads: frozenset[str], fn: _Function, receiver: str | None) -> bool:
    """Every name in ``reads`` (what the call and its arguments read) holds what ``fn`` was given."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    written = set(param_writes(fn, params)) | {n for s in fn.body for n in inplace_writes(s, nested=True)}
    rebound = {n for s in walked_of(fn, ast.stmt) for n in binds(s)}
    if receiver is not None and receiver in written:
        return False  # the function writes its object's state: a call may read what that wrote
    given = {p for p in params if p not in written and p not in rebound}
    counts = loop_counts(fn)
    state = _state_locals(fn, receiver, given, counts)
    plain = lambda a: counted(a, receiver, counts, tests=True) or state_part(a, receiver, counts, choices=True)  # noqa: E731
    views = view_locals(fn, given, plain, written) - written
    return bool(reads) and all(name in given or name in state or name in views for name in reads)


def _state_locals(fn: _Function, receiver: str | None, given: set[str], counts: frozenset[str]) -> set[str]:
    """Locals every binding of which is a plain assignment of a part of the object's state (see above)."""
    bindings: dict[str, list[ast.stmt]] = {}
    for stmt in walked_of(fn, ast.stmt):
        for name in binds(stmt):
            bindings.setdefault(name, []).append(stmt)
    return {
        name
        for name, stmts in bindings.items()
        if name not in given and all(_state_assign(s, name, receiver, counts) for s in stmts)
    }


def _state_assign(stmt: ast.stmt, name: str, receiver: str | None, counts: frozenset[str]) -> bool:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    return stmt.targets[0].id == name and state_part(stmt.value, receiver, counts, choices=True)


def state_untouched(
    site: Site, sites: list[Site], fn: _Function, receiver: str | None, submodules: frozenset[str] = frozenset()
) -> bool:
    """No other work of ``fn`` changes the object's state the call's body reads or writes, nor reads what it
    writes: a method of the object not planned here may change anything of it, a submodule's call that
    submodule (``submodules``: the attributes known to hold one, ``ge_layers.py``), a call planned on another
    stream what its body says."""
    body = site.callee.reads_state | site.callee.writes_state  # type: ignore[attr-defined]
    planned = {id(s.call.call): s for s in sites}
    for call in (n for n in walked_of(fn, ast.Call) if n is not site.call.call):
        other = planned.get(id(call))
        if other is not None and other.tag == site.tag:
            continue  # the same stream: in program order
        changes = other.callee.writes_state if other is not None else _changes(call, receiver, submodules)  # type: ignore[attr-defined]
        reads = other.callee.reads_state if other is not None else changes  # type: ignore[attr-defined]
        if _meet(changes, body) or _meet(reads, site.callee.writes_state):  # type: ignore[attr-defined]
            return False
    return True


def _changes(call: ast.Call, receiver: str | None, submodules: frozenset[str]) -> frozenset[str]:
    """What of the object a call not planned here may change: anything (``self.m(...)``), one submodule
    (``self.norm(x)``, ``self.a.b(x)``), nothing (a call not through the object)."""
    chain: list[str] = []
    node = call.func
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if receiver is None or not (isinstance(node, ast.Name) and node.id == receiver) or not chain:
        return frozenset()
    return frozenset({"*"}) if len(chain) == 1 and chain[0] not in submodules else frozenset({chain[-1]})


def _meet(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a and b) and ("*" in a or "*" in b or bool(a & b))
