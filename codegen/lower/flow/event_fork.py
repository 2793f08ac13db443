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

from codegen.frontend.ir import StreamFunction
from codegen.lower.flow.sites import Site

__all__ = ["event_forks"]

_BLOCKS = ("body", "orelse", "finalbody")


def event_forks(
    fn: ast.AST, functions: Iterable[StreamFunction], module: str, sites: list[Site], receiver: str | None
) -> frozenset[ast.stmt]:
    """The statements of ``fn`` (a method whose ``self`` is ``receiver``) whose planned call needs no fork record:
    the statement before it records, on the caller's stream, an event the call's method waits for first."""
    if receiver is None:
        return frozenset()
    by_name = {f.qualname: f for f in functions}
    before = dict(_previous(fn))
    planned = {site.stmt for site in sites}
    return frozenset(
        site.stmt
        for site in sites
        if site.stmt in before
        and before[site.stmt] not in planned
        and _names_only(site)
        and _waits_first(by_name, module, site) & _records_last(by_name, before[site.stmt], site, receiver)
    )


def _previous(fn: ast.AST) -> Iterator[tuple[ast.stmt, ast.stmt]]:
    """Each statement with the one just before it in its block."""
    for node in ast.walk(fn):
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from ((later, earlier) for earlier, later in zip(block, block[1:]))


def _names_only(site: Site) -> bool:
    """The call is the statement's whole value and every argument a bare name: nothing runs before it."""
    value = site.stmt.value if isinstance(site.stmt, (ast.Assign, ast.Expr)) else None
    return value is site.call.call and all(a.bare and not isinstance(a.node, ast.Starred) for a in site.args)


def _own(by_name: dict[str, StreamFunction], module: str, key: str) -> StreamFunction | None:
    found_module, _, qualname = key.partition(":")
    return by_name.get(qualname) if found_module == module else None


def _waits_first(by_name: dict[str, StreamFunction], module: str, site: Site) -> set[str]:
    """The class's events the call's method waits for unconditionally as it starts."""
    callee = _own(by_name, module, site.callee.key)  # type: ignore[attr-defined]
    if callee is None or callee.owner is None:
        return set()
    return {name for spec in callee.waits if spec.when is None for name in spec.names if ":" not in name}


def _records_last(by_name: dict[str, StreamFunction], stmt: ast.stmt, site: Site, receiver: str) -> set[str]:
    """The class's events that ``stmt`` records on the caller's stream as its last work: it only binds names to
    the result of ``receiver.<method>(...)``, a method of the call's class recording them unconditionally."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [] if isinstance(stmt, ast.Expr) else None
    value = getattr(stmt, "value", None)
    if targets is None or not all(_bound_names(t) for t in targets) or not isinstance(value, ast.Call):
        return set()
    func = value.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == receiver):
        return set()
    owner = site.callee.key.partition(":")[2].rpartition(".")[0]  # type: ignore[attr-defined]
    recorder = by_name.get(f"{owner}.{func.attr}")
    if recorder is None or (recorder.stream is not None and not recorder.stream.is_default):
        return set()
    return {name for spec in recorder.records if spec.when is None for name in spec.names if ":" not in name}


def _bound_names(target: ast.expr) -> bool:
    if isinstance(target, ast.Tuple):
        return all(isinstance(t, ast.Name) for t in target.elts)
    return isinstance(target, ast.Name)
