"""Calls whose own ``@after`` event is their fork: the caller's stream recorded it just before, and the call's stream
waits for it first thing.

A call forks so that its stream waits for the work the caller's stream issued before it. Where the statement
just before the call is a call of a method of the same class that records a user event as it ends
(``@records("dispatched")``, on the caller's stream, unconditionally), and the call's own method waits for that
very event before anything else (``@after("dispatched")``, unconditionally), that wait already orders the call's
stream after everything the caller issued before the call: nothing runs on the caller's stream between the record
and the call (the record's statement only binds names, the call's arguments are names). A fork record there would
be a second event at the same point (CONTRACT section 2: one event per point), and its wait a second wait for it;
the call is still treated as forked by every other decision (its stream is ordered after the caller's work).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from codegen.frontend.ir import Events, ModuleIR, StreamFunction
from codegen.index.walked import walked
from codegen.lower.flow.sites import Site

__all__ = ["event_forks"]

_BLOCKS = ("body", "orelse", "finalbody")


def event_forks(
    ir: ModuleIR, qualname: str, fn: ast.AST, receiver: str | None, sites: list[Site]
) -> frozenset[ast.stmt]:
    """The statements of the method ``fn`` (``qualname``, its ``self`` is ``receiver``) whose planned call needs no
    fork record: the statement before it records, on the caller's stream, an event the call's method waits for
    first; both are methods of the caller's own class, decorated in its module (``ir``)."""
    owner = qualname.rpartition(".")[0]
    if receiver is None or not owner:
        return frozenset()
    methods = {f.name: f for f in ir.functions if f.owner == owner}
    before = dict(_previous(fn))
    planned = {site.stmt for site in sites}
    return frozenset(
        site.stmt
        for site in sites
        if site.stmt in before
        and before[site.stmt] not in planned
        and _names_only(site)
        and _waits_first(_own_method(site.call.call, receiver, methods), f"{ir.module_name}:{owner}", site)
        & _records_last(before[site.stmt], receiver, methods)
    )


def _previous(fn: ast.AST) -> Iterator[tuple[ast.stmt, ast.stmt]]:
    """Each statement with the one just before it in its block."""
    for node in walked(fn):  # ``ast.walk``'s order, from the kept walk
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from ((later, earlier) for earlier, later in zip(block, block[1:]))


def _names_only(site: Site) -> bool:
    """The call is the statement's whole value and every argument a bare name: nothing runs before it."""
    value = site.stmt.value if isinstance(site.stmt, (ast.Assign, ast.Expr)) else None
    return value is site.call.call and all(a.bare and not isinstance(a.node, ast.Starred) for a in site.args)


def _own_method(call: ast.expr, receiver: str, methods: dict[str, StreamFunction]) -> StreamFunction | None:
    """The caller's class's decorated method that ``call`` (``receiver.<method>(...)``) calls, if any."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    target = call.func
    return methods.get(target.attr) if isinstance(target.value, ast.Name) and target.value.id == receiver else None


def _unshared(specs: Iterable[Events]) -> set[str]:
    """The class's events named by ``specs`` (``@after``/``@records``) that hold unconditionally."""
    return {name for spec in specs if spec.when is None for name in spec.names if ":" not in name}


def _waits_first(callee: StreamFunction | None, owner_key: str, site: Site) -> set[str]:
    """The events the call's method (the planned call's own callee) waits for unconditionally as it starts."""
    if callee is None or site.callee.key != f"{owner_key}.{callee.name}":  # type: ignore[attr-defined]
        return set()
    return _unshared(callee.waits)


def _records_last(stmt: ast.stmt, receiver: str, methods: dict[str, StreamFunction]) -> set[str]:
    """The events that ``stmt`` records on the caller's stream as its last work: it only binds names to the result
    of a method of the caller's class that records them unconditionally and runs on the caller's stream."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [] if isinstance(stmt, ast.Expr) else None
    if targets is None or not all(_bound_names(t) for t in targets):
        return set()
    recorder = _own_method(stmt.value, receiver, methods)  # type: ignore[attr-defined]
    if recorder is None or (recorder.stream is not None and not recorder.stream.is_default):
        return set()
    return _unshared(recorder.records)


def _bound_names(target: ast.expr) -> bool:
    if isinstance(target, ast.Tuple):
        return all(isinstance(t, ast.Name) for t in target.elts)
    return isinstance(target, ast.Name)
