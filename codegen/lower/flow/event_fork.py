"""Calls whose own ``@after`` event is their fork: the caller's stream recorded it last, and the call's stream waits
for it first thing.

A call forks so that its stream waits for the work the caller's stream issued before it. Where a statement of the
caller calls a method of the same class that records a user event as it ends (``@records("dispatched")``, on the
caller's stream, unconditionally), and the call's own method waits for that very event before anything else
(``@after("dispatched")``, unconditionally), that wait orders the call's stream after everything the caller issued
before the record. The record serves as the call's fork where the fork may reuse it as it reuses an earlier call's
fork record (:func:`~codegen.lower.flow.reuse.earlier_fork`): it is the latest record before the call on every path
(earlier in its block, or in a block around it through ``if`` statements only), and nothing between reads or writes
on the caller's stream what the call reads (the record's own results were made before it). No other call of the
function records that event (a wait reads the event's latest record, maybe made on another stream), and the call
evaluates nothing before its body's wait (its arguments are names). A fork record there would be a second event
ordering the same work (CONTRACT section 2: one event per point), and its wait a second wait; the call is still
treated as forked by every other decision (its stream is ordered after the caller's work it reads).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen.frontend.ir import Events, ModuleIR, StreamFunction
from codegen.index.blocks import STATEMENT_HOLDERS
from codegen.index.walked import walked_of
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.reuse import earlier_fork
from codegen.lower.flow.sites import Site
from codegen.lower.plan import EventRef

__all__ = ["EventForks", "event_forks"]

_BLOCKS = ("body", "orelse", "finalbody")


@attrs.frozen
class EventForks:
    """A caller's statements that record a user event on its stream, and the calls that wait for one first."""

    records: dict[ast.stmt, frozenset[str]] = attrs.field(factory=dict)  # statement -> the events it records last
    waits: dict[ast.stmt, frozenset[str]] = attrs.field(factory=dict)  # call -> the events its method waits for first

    def serves(self, facts: CallerFacts, site: Site) -> bool:
        """The latest record of an event the call's method waits for first orders the call as a fork would."""
        events = self.waits.get(site.stmt, frozenset())
        guard = facts.syncs[site.index].guard_text  # the record is made on every path: it serves any guard
        return any(self._served(facts, site, event, guard) for event in events)

    def _served(self, facts: CallerFacts, site: Site, event: str, guard: str | None) -> bool:
        recorders = {stmt: (_ANY, guard, frozenset[str]()) for stmt, found in self.records.items() if event in found}
        return bool(recorders) and earlier_fork(facts, site, recorders) is not None


_ANY = EventRef(var="", tag="")  # the record's event is the caller's class's own: only its position matters


def event_forks(ir: ModuleIR, qualname: str, fn: ast.AST, receiver: str | None, sites: list[Site]) -> EventForks:
    """The user events of the method ``fn`` (``qualname``, its ``self`` is ``receiver``) that may serve its planned
    calls as forks: the statements recording one on the caller's stream, and the calls whose method waits for one
    first, recorded by no planned call; both methods of the caller's own class, decorated in its module (``ir``)."""
    owner = qualname.rpartition(".")[0]
    if receiver is None or not owner:
        return EventForks()
    methods = {f.name: f for f in ir.functions if f.owner == owner}
    planned = {site.stmt for site in sites}
    records = {stmt: frozenset(found) for stmt in _statements(fn) if (found := _records_last(stmt, receiver, methods))}
    records = {stmt: found for stmt, found in records.items() if stmt not in planned}
    elsewhere = {e for site in sites for e in _recorded_by(site, methods, receiver)}
    waits = {
        site.stmt: frozenset(found - elsewhere)
        for site in sites
        if _names_only(site)
        and (found := _waits_first(_own_method(site.call.call, receiver, methods), f"{ir.module_name}:{owner}", site))
        - elsewhere
    }
    return EventForks(records=records, waits=waits)


def _statements(fn: ast.AST) -> Iterable[ast.stmt]:
    for node in walked_of(fn, STATEMENT_HOLDERS):  # ``ast.walk``'s order, from the kept walk
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from (s for s in block if isinstance(s, ast.stmt))


def _recorded_by(site: Site, methods: dict[str, StreamFunction], receiver: str) -> set[str]:
    """The events a planned call's method records (on its stream): never a fork on the caller's."""
    callee = _own_method(site.call.call, receiver, methods)
    return {name for spec in callee.records for name in spec.names} if callee is not None else set()


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
