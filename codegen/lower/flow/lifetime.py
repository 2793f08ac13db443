"""When a manual call's inputs need no ``record_stream``: the caller waits for the call's stream before it allocates.

``record_stream(x, S)`` keeps the memory of ``x``, made on the caller's stream, from going to that stream's next
allocation while stream S may still read it. It orders nothing when the caller's stream waits, on an event that S
records after the call, before it can allocate again: from the call on, each statement of its block runs no op on
the caller's stream (flags, unpacking, and calls of stream functions with plain arguments, which run on their own
stream) up to a call, with plain arguments, of a method of the caller's class that first waits, unguarded, for an
event a call on S has recorded since (``self.add_shared(routed, shared)`` whose ``@after("shared_done")`` matches
the ``@records("shared_done")`` of the last call on S). Methods of other classes and modules count as allocating.
The same holds for a tensor made by an earlier call on another side stream M, when no call on M is issued
between the call and that wait: M's next allocation comes after the wait.
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.ir import StreamFunction
from codegen.index import scan
from codegen.index.returned import returned_param
from codegen.lower.flow.exprs import bound_names, leaves, runs_op
from codegen.lower.flow.site_sync import computed, param_of
from codegen.lower.flow.sites import Site

__all__ = ["EventFacts", "WaitAhead", "result_alias", "wait_ahead"]


@attrs.frozen(kw_only=True)
class EventFacts:
    """The user events of one module's functions, by qualname, and which of them return a parameter as it came."""

    records: dict[str, frozenset[str]]  # recorded at the end whenever the function runs on its stream
    waits: dict[str, frozenset[str]]  # waited for first, always
    returns_param: dict[str, str] = attrs.Factory(dict)  # ``return grad`` after ``dist.all_reduce(grad)``

    @classmethod
    def of(cls, functions: tuple[StreamFunction, ...], tree: ast.Module | None = None) -> EventFacts:
        nodes = scan.functions_by_qualname(tree) if tree is not None else {}
        returned = {q: returned_param(nodes[q]) for q in (fn.qualname for fn in functions) if q in nodes}
        return cls(
            records={fn.qualname: _recorded(fn) for fn in functions},
            waits={fn.qualname: frozenset(n for s in fn.waits if s.when is None for n in s.names) for fn in functions},
            returns_param={q: name for q, name in returned.items() if name is not None},
        )


def _recorded(fn: StreamFunction) -> frozenset[str]:
    stream_when = fn.stream.when if fn.stream is not None else None
    return frozenset(n for s in fn.records if s.when is None or s.when == stream_when for n in s.names)


@attrs.frozen(kw_only=True)
class WaitAhead:
    """The caller's stream waits for a call's stream further on in the call's block."""

    clean: bool  # no op ran on the caller's stream between the call and the wait
    streams: frozenset[str]  # the streams of the calls issued until then
    held: frozenset[str]  # names the waiting call reads, each holding its memory past the wait
    bound: frozenset[str]  # names bound between the call and the wait (they no longer hold what they held)


def wait_ahead(
    site: Site, block: list[ast.stmt], sites: dict[ast.stmt, list[Site]], facts: EventFacts, owner: str | None
) -> WaitAhead | None:
    """Where the caller's stream, on every path from the call, waits for an event ``site``'s stream records after
    it: a call, with plain arguments, of a method of the caller's class that first waits for it. None if nowhere."""
    walk = _Walk(site=site, facts=facts)
    for stmt in block[block.index(site.stmt) :]:
        waits = _waits_first(stmt, facts, owner) & walk.recorded
        if leaves(stmt) and not (isinstance(stmt, ast.Return) and waits):
            return None  # a path leaves the block before any wait
        here = sites.get(stmt, [])
        if not here and waits:
            held = frozenset(a.id for a in _call_of(stmt)[1] if isinstance(a, ast.Name))
            return WaitAhead(clean=walk.clean, streams=frozenset(walk.streams), held=held, bound=frozenset(walk.bound))
        walk.passed(stmt, here)
    return None


@attrs.define(eq=False)
class _Walk:
    """What the statements from a call on did until the wait: events recorded on its stream, streams issued to,
    names bound, and whether no op ran on the caller's stream."""

    site: Site
    facts: EventFacts
    recorded: set[str] = attrs.Factory(set)
    streams: set[str] = attrs.Factory(set)
    bound: set[str] = attrs.Factory(set)
    clean: bool = True

    def passed(self, stmt: ast.stmt, here: list[Site]) -> None:
        """``stmt``, whose planned calls are ``here``, ran: it issued those calls, or ran its ops."""
        if here:
            self.clean = self.clean and not any(computed(a.node) for s in here for a in s.args)
            records = self.facts.records
            self.recorded |= {e for s in here if s.tag == self.site.tag for e in records.get(_qualname(s), ())}
            self.streams |= {s.tag for s in here}
        else:
            self.clean = self.clean and not runs_op(stmt)
        if stmt is not self.site.stmt:
            self.bound |= bound_names(stmt)


def result_alias(site: Site, facts: EventFacts, hoisted: dict[int | str, str]) -> dict[str, str]:
    """``{argument: result}`` when the call returns that argument as it came (``reduced = self.all_reduce(g)``;
    ``hoisted``: the names computed arguments are bound to before the call)."""
    param = facts.returns_param.get(_qualname(site))
    target = site.stmt.targets[0] if isinstance(site.stmt, ast.Assign) and len(site.stmt.targets) == 1 else None
    if param is None or not isinstance(target, ast.Name):
        return {}
    for argument in site.args:
        name = hoisted.get(argument.slot) or (argument.name if argument.bare else None)
        if param_of(site, argument.slot) == param and name:
            return {name: target.id}
    return {}


def _call_of(stmt: ast.stmt) -> tuple[ast.Call | None, list[ast.expr]]:
    """The call a statement makes whole (``f(...)``, ``x = f(...)``, ``return f(...)``), with its arguments."""
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.Return)) else None
    if not isinstance(call, ast.Call):
        return None, []
    return call, [*call.args, *(k.value for k in call.keywords)]


def _qualname(site: Site) -> str:
    return site.callee.qualname  # type: ignore[attr-defined]


def _waits_first(stmt: ast.stmt, facts: EventFacts, owner: str | None) -> frozenset[str]:
    """The events the method ``stmt`` calls waits for before anything else (``self.m(a, b)``, bound or returned,
    with plain arguments); none for any other statement."""
    call, arguments = _call_of(stmt)
    if owner is None or call is None or not isinstance(call.func, ast.Attribute):
        return frozenset()
    if not isinstance(call.func.value, ast.Name) or any(computed(a) for a in arguments):
        return frozenset()
    return facts.waits.get(f"{owner}.{call.func.attr}", frozenset())
