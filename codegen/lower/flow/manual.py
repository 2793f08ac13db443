"""Calls of ``sync="manual"`` stream functions: on their stream at the call site, ordered by the user's events.

The call site switches the stream; every ``@after``/``@records`` is the user's, so nothing forks or joins.
Lifetime is still protected (CONTRACT section 2): a tensor the call reads that its stream did not make is
kept alive for that stream, once per function (a name a later call on the same stream reads again needs
no second record, unless something rebinds it in between), unless the caller's stream waits for the call's
stream before it can allocate again (:mod:`codegen.lower.flow.lifetime`).
"""

from __future__ import annotations

import ast

import attrs

from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.lifetime import EventFacts, WaitAhead, result_alias, wait_ahead
from codegen.lower.flow.site_sync import Flags, hoisted_arguments
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import argument_names, statement_blocks
from codegen.lower.flow.statements import slot_node as _slot_node
from codegen.lower.plan import Assign, CallEdit, CallerPlan, Cond, KeepAlive, SwitchStream, Value, Wrap

__all__ = ["with_manual_sites"]


def with_manual_sites(
    fn: ast.AST,
    plan: CallerPlan,
    sites: list[Site],
    flags: Flags,
    *,
    keep_alive: bool,
    receiver: str | None,
    events: EventFacts | None = None,
    owner: str | None = None,
) -> CallerPlan:
    """``plan`` with a wrap for each manual call (in ``fn``, whose ``self`` is ``receiver``, a method of ``owner``)
    whose guard the call site can read as written; ``events``: the user events of the module's functions."""
    wraps, calls, steps = dict(plan.wraps), dict(plan.calls), dict(plan.steps)
    made: dict[str, str] = {}  # name -> the stream whose manual call bound it last
    made_aside = {name for stmt in plan.wraps for name in bound_names(stmt)}  # bound by an automatic call
    kept: set[tuple[str, str]] = set()
    last = 0
    whole = _whole_statements(sites)
    blocks = statement_blocks(fn)
    by_stmt: dict[ast.stmt, list[Site]] = {}
    for site in sites:
        by_stmt.setdefault(site.stmt, []).append(site)
    for site in sorted(sites, key=lambda s: (s.stmt.lineno, s.stmt.col_offset)):
        for name in _rebound(fn, last, site.stmt.lineno):
            made.pop(name, None)
            kept = {k for k in kept if k[0] != name}
        last = site.stmt.lineno
        if site.guard.static is False or site.guard.hoist is not None or whole.get(id(site.stmt)) is False:
            continue
        when = Cond.of(site.guard.expr) if site.guard.dynamic else None
        hoisted = [] if id(site.stmt) in whole else hoisted_arguments(site, flags)
        if hoisted:
            calls[site.call.call] = CallEdit(hoisted=tuple(hoisted))
            bound = tuple(
                Assign(name=name, value=ast.unparse(_slot_node(site.call.call, slot))) for slot, name in hoisted
            )
            steps[("before", site.stmt, "")] = (*steps.get(("before", site.stmt, ""), ()), *bound)
        values: tuple[Value, ...] = ()
        if keep_alive:
            ahead = wait_ahead(site, blocks[site.stmt], by_stmt, events, owner) if events is not None else None
            safe = _safe_names(site, ahead, events, receiver, made, made_aside, dict(hoisted))
            values = _crossing(site, made, kept, receiver, dict(hoisted), safe)
        enter = (KeepAlive(stream=site.tag, when=when, values=values),) if values else ()
        if site.stmt in wraps:  # another call of the same statement (run whole on the stream): one wrap
            enter = (*wraps[site.stmt].enter, *enter)
        priority = site.callee.priority  # type: ignore[attr-defined]
        wraps[site.stmt] = Wrap(switch=SwitchStream(tag=site.tag, priority=priority, when=when), enter=enter)
        for name in bound_names(site.stmt):
            made[name] = site.tag
    return attrs.evolve(plan, wraps=wraps, calls=calls, steps=steps)


def _whole_statements(sites: list[Site]) -> dict[int, bool]:
    """Statements that hold several of the calls (``return self.b(x, self.a(x))``, run whole on their stream):
    whether their calls agree on the guard as the call site reads it (else each runs on its caller's stream)."""
    by_stmt: dict[int, list[Site]] = {}
    for site in sites:
        by_stmt.setdefault(id(site.stmt), []).append(site)
    return {
        key: len({(s.guard.expr, s.guard.dynamic) for s in group}) == 1
        for key, group in by_stmt.items()
        if len(group) > 1
    }


def _crossing(
    site: Site,
    made: dict[str, str],
    kept: set[tuple[str, str]],
    receiver: str | None,
    hoisted: dict[int | str, str],
    safe: set[str],
) -> tuple[Value, ...]:
    """The inputs to keep alive for the call's stream: not made by that stream, not kept already, not ``safe``."""
    values: list[Value] = []
    for argument in site.args:
        bare = (argument.bare and argument.name) or argument.slot in hoisted
        for name in argument_names(argument, receiver, hoisted):
            if made.get(name) == site.tag or (name, site.tag) in kept or name in safe:
                continue
            kept.add((name, site.tag))
            values.append(Value(name=name, tensor=argument.tensor) if bare else Value(name=name))
    return tuple(values)


def _safe_names(
    site: Site,
    ahead: WaitAhead | None,
    events: EventFacts | None,
    receiver: str | None,
    made: dict[str, str],
    made_aside: set[str],
    hoisted: dict[int | str, str],
) -> set[str]:
    """The names whose memory no stream can reuse while the call's stream reads it, given where the caller's
    stream waits for it (``ahead``): it waits before it allocates again (names it made, or made by a side
    stream that issues nothing more until then), or the waiting call reads the name (or the call's result
    that is the name's tensor)."""
    if events is None or ahead is None:
        return set()
    names = {n for a in site.args for n in argument_names(a, receiver, hoisted)}
    busy = made_aside | {n for n, tag in made.items() if tag in ahead.streams}
    safe = {n for n in names if ahead.clean and n not in busy}
    for name, alias in {**{n: n for n in names}, **result_alias(site, events, hoisted)}.items():
        if alias in ahead.held and alias not in ahead.bound:
            safe.add(name)
    return safe


def _rebound(fn: ast.AST, after: int, before: int) -> set[str]:
    """Names a simple statement between two lines binds (they no longer hold what they held)."""
    return {
        name
        for stmt in walked_of(fn, ast.stmt)
        if not hasattr(stmt, "body") and after < stmt.lineno < before
        for name in bound_names(stmt)
    }
