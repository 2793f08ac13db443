"""Names a statement binds to memory of their own: after it they hold none of what a pending call reads.

``a = x + 1``, ``r = self.single(a)``, then ``a = x * 3`` and ``a.add_(1)``: the write is to the new ``a``, which the
side call never reads. A pending call's inputs (the caller's names whose memory it reads, widened to every name that
may share it: ``binding_aliases.py``) were taken once, at the call, and held whatever the caller bound to them later,
so that write waited for the side call. A binding that ``binding_aliases`` links to no name's memory (no view,
reference copy, call result that may be an argument, loop item, choice, container copy) is a value of its own: the
transfer drops its names from every pending call's inputs there (``transfer.py``). Only a plain or annotated
assignment rebinds (``a += 1`` writes in place); a path that does not rebind keeps the name (a merge unions the
inputs), and a loop's head merges what enters it, so a write in an iteration before the rebinding still waits. The
other names that may share the input's memory (``v = a[0]`` before) keep it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen.index.walked import walked_of
from codegen.lower.flow.binding_aliases import Binding, linked_bindings
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.state import State

__all__ = ["fresh_bindings", "released"]


def fresh_bindings(fn: ast.AST, results: Iterable[Binding]) -> dict[ast.stmt, frozenset[str]]:
    """Each assignment of ``fn`` -> the names it binds to memory of their own (``results``: the bindings to a call's
    result that may be an argument, ``result_aliases.py``)."""
    linked = linked_bindings(fn, results)
    found: dict[ast.stmt, frozenset[str]] = {}
    assignments: list[ast.Assign | ast.AnnAssign] = [*walked_of(fn, ast.Assign), *walked_of(fn, ast.AnnAssign)]
    for stmt in assignments:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if stmt.value is not None else []
        names = frozenset(n for t in targets for n in bound_names(t) if (n, id(stmt)) not in linked)
        if names:
            found[stmt] = names
    return found


def released(state: State, names: frozenset[str]) -> State:
    """``state`` where no pending call reads ``names`` any longer (the statement bound them anew)."""
    if not names:
        return state
    return tuple(attrs.evolve(p, inputs=p.inputs - names) if p.inputs & names else p for p in state)
