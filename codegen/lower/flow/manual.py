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
from codegen.lower.flow.spelling import spelled_expr
from codegen.lower.flow.statements import argument_names, statement_blocks
from codegen.lower.flow.statements import slot_node as _slot_node
from codegen.lower.plan import Anchor, Assign, CallEdit, CallerPlan, Cond, KeepAlive, Step, SwitchStream, Value, Wrap

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
    manual = _Manual(fn=fn, plan=plan, sites=sites, flags=flags, receiver=receiver, events=events, owner=owner)
    for site in sorted(sites, key=lambda s: (s.stmt.lineno, s.stmt.col_offset)):
        manual.forget_rebound(site)
        if site.guard.static is not False and site.guard.hoist is None and manual.whole.get(id(site.stmt)) is not False:
            manual.wrap(site, keep_alive)
    return attrs.evolve(plan, wraps=manual.wraps, calls=manual.calls, steps=manual.steps)


@attrs.define(eq=False)
class _Manual:
    """The manual calls of one caller, wrapped in source order, with what the earlier ones made and kept."""

    fn: ast.AST
    plan: CallerPlan
    sites: list[Site]
    flags: Flags
    receiver: str | None
    events: EventFacts | None
    owner: str | None
    wraps: dict[ast.stmt, Wrap] = attrs.field(init=False)
    calls: dict[ast.Call, CallEdit] = attrs.field(init=False)
    steps: dict[Anchor, tuple[Step, ...]] = attrs.field(init=False)
    made: dict[str, str] = attrs.Factory(dict)  # name -> the stream whose manual call bound it last
    made_aside: set[str] = attrs.field(init=False)  # bound by an automatic call
    kept: set[tuple[str, str]] = attrs.Factory(set)
    last: int = 0  # the line of the call before
    whole: dict[int, bool] = attrs.field(init=False)
    blocks: dict[ast.stmt, list[ast.stmt]] = attrs.field(init=False)
    by_stmt: dict[ast.stmt, list[Site]] = attrs.Factory(dict)

    def __attrs_post_init__(self) -> None:
        self.wraps, self.calls, self.steps = dict(self.plan.wraps), dict(self.plan.calls), dict(self.plan.steps)
        self.made_aside = {name for stmt in self.plan.wraps for name in bound_names(stmt)}
        self.whole, self.blocks = _whole_statements(self.sites), statement_blocks(self.fn)
        for site in self.sites:
            self.by_stmt.setdefault(site.stmt, []).append(site)

    def forget_rebound(self, site: Site) -> None:
        """The names rebound since the call before hold no longer what a call made or kept."""
        for name in _rebound(self.fn, self.last, site.stmt.lineno):
            self.made.pop(name, None)
            self.kept = {k for k in self.kept if k[0] != name}
        self.last = site.stmt.lineno

    def wrap(self, site: Site, keep_alive: bool) -> None:
        """The call on its stream, its computed arguments bound before it, its inputs kept alive for it."""
        when = Cond.of(site.guard.expr) if site.guard.dynamic else None
        hoisted = self._hoisted(site)
        values = self._kept(site, hoisted) if keep_alive else ()
        enter = (KeepAlive(stream=site.tag, when=when, values=values),) if values else ()
        if site.stmt in self.wraps:  # another call of the same statement (run whole on the stream): one wrap
            enter = (*self.wraps[site.stmt].enter, *enter)
        priority = site.callee.priority  # type: ignore[attr-defined]
        self.wraps[site.stmt] = Wrap(switch=SwitchStream(tag=site.tag, priority=priority, when=when), enter=enter)
        for name in bound_names(site.stmt):
            self.made[name] = site.tag

    def _hoisted(self, site: Site) -> dict[int | str, str]:
        """The call's computed arguments bound to fresh names just before it (none in a statement run whole)."""
        hoisted = [] if id(site.stmt) in self.whole else hoisted_arguments(site, self.flags)
        if hoisted:
            self.calls[site.call.call] = CallEdit(hoisted=tuple(hoisted))
            bound = tuple(
                Assign(name=name, value=spelled_expr(_slot_node(site.call.call, slot))) for slot, name in hoisted
            )
            self.steps[("before", site.stmt, "")] = (*self.steps.get(("before", site.stmt, ""), ()), *bound)
        return dict(hoisted)

    def _kept(self, site: Site, hoisted: dict[int | str, str]) -> tuple[Value, ...]:
        """The call's inputs kept alive for its stream (none the caller's stream waits for before it allocates)."""
        events = self.events
        ahead = (
            wait_ahead(site, self.blocks[site.stmt], self.by_stmt, events, self.owner) if events is not None else None
        )
        safe = _safe_names(site, ahead, events, self.receiver, self.made, self.made_aside, hoisted)
        return _crossing(site, self.made, self.kept, self.receiver, hoisted, safe)


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
