"""The sync planner: for every function that calls stream functions, the steps its dataflow asks for.

For each planned call (:mod:`codegen.flow.sites`) the caller passes ``join=False`` and then:
keeps alive, for the callee's stream, every tensor argument that crosses to it (made on another
stream); joins just before the first statement that reads the result, on the paths where the call
forked (a flag set at the call says so where only some paths did); relays a result handed whole to
a call on another side stream (that stream waits, the caller's does not); and keeps alive, for its
own stream, the results it reads after the join. Every wait reads the same guard value as the
callee's fork: the guard as spelled at the call, or a flag read once at the call when the caller may
change what the guard reads in between.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.flow.analyze import Analysis, analyze
from codegen.flow.exprs import bound_names
from codegen.flow.sites import Site
from codegen.flow.state import State, pending
from codegen.flow.transfer import Join, Relay, Step as FlowStep
from codegen.naming import snake
from codegen.plan import (
    Anchor,
    Assign,
    CallEdit,
    CallerPlan,
    Cond,
    CurrentStream,
    EventRef,
    KeepAlive,
    Step,
    StreamWait,
    Value,
    Wait,
)

__all__ = ["Flags", "plan_caller"]


@attrs.define(eq=False)
class Flags:
    """The generated locals of one caller: flags and bound arguments, fresh against ``taken``."""

    taken: set[str]

    def fresh(self, wanted: str) -> str:
        name, n = wanted, 0
        while name in self.taken:
            n += 1
            name = f"{wanted}_{n}"
        self.taken.add(name)
        return name


@attrs.define(eq=False)
class _Relations:
    sites: list[Site]
    keys: list[str | None]  # each site's guard as a comparable key (None: it always forks)

    def consume(self, producer: int, consumer: int) -> str:
        same_guard = self.keys[consumer] is None or self.keys[consumer] == self.keys[producer]
        if not same_guard:
            return "join"
        return "none" if self.sites[producer].tag == self.sites[consumer].tag else "relay"

    def covers(self, earlier: int, later: int) -> bool:
        same_guard = self.keys[later] is None or self.keys[later] == self.keys[earlier]
        return same_guard and self.sites[earlier].tag == self.sites[later].tag


@attrs.frozen(kw_only=True)
class _SiteSync:
    """How one site's fork is read at its joins."""

    cond: Cond | None  # the guard (or the flag) a must-join reads
    flag: str | None  # the local that says the call forked (set at the call)
    guard_text: str | None  # the guard's value as spelled at the call (after any bound argument)
    hoisted: tuple[tuple[int | str, str], ...]


def plan_caller(fn: ast.FunctionDef | ast.AsyncFunctionDef, sites: list[Site], current: CurrentStream,
                flags: Flags, join_event: Callable[[Site], EventRef]) -> CallerPlan:
    """The steps of one caller with planned ``sites`` (their ``index`` is their position in ``sites``).

    A call joined by the very next statement overlaps nothing: it is left as written (the callee joins)."""
    following = _following(fn)
    while True:
        relations = _Relations(sites, [_guard_key(s, fn) for s in sites])
        result = analyze(fn, {s.stmt: s.view() for s in sites}, relations)
        at_once = [s for s in sites if _joined_at_once(s, result, following)]
        if not at_once:
            break
        sites = [attrs.evolve(s, index=i) for i, s in enumerate(s for s in sites if s not in at_once)]
        if not sites:
            return CallerPlan(steps={})
    syncs = [_sync(s, result, fn, flags) for s in sites]
    steps: dict[Anchor, list[Step]] = {}
    for anchor, found in result.steps.items():
        joins = [_lower(s, sites, syncs, current, join_event) for s in found if isinstance(s, Join)]
        relays = [_lower(s, sites, syncs, current, join_event) for s in found if isinstance(s, Relay)]
        steps[anchor] = [x for part in (*joins, *relays) for x in part]
    for site, sync in zip(sites, syncs):
        state = result.states.get(site.stmt, ())
        _place_call(steps, site, sync, _same_stream(state, site, relations))
    start = tuple(Assign(name=s.flag, value="False") for s, site in zip(syncs, sites)
                  if s.flag and _any_may(result, site.index))
    calls = {site.call.call: CallEdit(join_kw=site.callee.join_kw, hoisted=sync.hoisted)  # type: ignore[attr-defined]
             for site, sync in zip(sites, syncs)}
    return CallerPlan(steps={k: tuple(v) for k, v in steps.items() if v}, start=start, calls=calls)


def _following(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[ast.stmt, Anchor]:
    """Where the statement after each statement begins: before the next one of its block, or the block's end."""
    found: dict[ast.stmt, Anchor] = {}
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                for stmt, after in zip(block, [*block[1:], None]):
                    found[stmt] = ("before", after, "") if after is not None else ("end", node, field)
    return found


def _joined_at_once(site: Site, result: Analysis, following: dict[ast.stmt, Anchor]) -> bool:
    """Every join of ``site`` is right after its call, and nothing is relayed from it."""
    placed = [(anchor, step) for anchor, steps in result.steps.items() for step in steps if step.site == site.index]
    return bool(placed) and all(isinstance(step, Join) and anchor == following.get(site.stmt)
                                for anchor, step in placed)


def _same_stream(state: State, site: Site, relations: _Relations) -> set[str]:
    """The names that hold results the site's stream made itself (nothing to keep alive for it)."""
    return {n for p in pending(state) if relations.consume(p.site, site.index) == "none" for n in p.names}


def _guard_key(site: Site, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """Two sites with the same key fork on the same paths; None: the site always forks."""
    guard = site.guard
    if guard.static:
        return None
    if guard.hoist is not None or guard.expr is None or not _stable(guard.expr, fn):
        return f"<call {site.index}>"
    return guard.expr


def _stable(expr: str, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``fn`` never assigns the guard's root, nor an attribute along its path."""
    parts = expr.split(".")
    prefixes = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    for stmt in fn.body:
        if parts[0] in bound_names(stmt) and parts[0] != "self":
            return False
        for sub in ast.walk(stmt):
            targets = sub.targets if isinstance(sub, ast.Assign) else \
                [sub.target] if isinstance(sub, (ast.AugAssign, ast.AnnAssign)) else []
            if any(_dotted_text(t) in prefixes for t in targets):
                return False
    return True


def _dotted_text(node: ast.expr) -> str | None:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):  # pragma: no cover - an unparsable target reads no guard
        return None


def _any_may(result: Analysis, site: int) -> bool:
    return any(s.site == site and s.may for found in result.steps.values() for s in found)


def _sync(site: Site, result: Analysis, fn: ast.FunctionDef | ast.AsyncFunctionDef, flags: Flags) -> _SiteSync:
    hoisted: list[tuple[int | str, str]] = [(a.slot, flags.fresh(_param_name(site, a.slot)))
                                            for a in site.args if a.name is None]
    guard = site.guard
    text = guard.expr
    if guard.hoist is not None:
        slot = _slot_of(site.call.call, guard.hoist)
        name = next((n for s, n in hoisted if s == slot), None) or flags.fresh(_param_name(site, slot))
        if (slot, name) not in hoisted:
            hoisted.append((slot, name))
        text = f"{name}{guard.rest}"
    may = _any_may(result, site.index)
    needs_flag = may or (guard.dynamic and (guard.hoist is None and not _stable(text or "", fn)))
    flag = flags.fresh(f"{_short(site)}_forked") if needs_flag else None
    cond = Cond.of(flag) if flag else Cond.of(text) if guard.dynamic else None
    return _SiteSync(cond=cond, flag=flag, guard_text=text if guard.dynamic else None,
                     hoisted=tuple(sorted(hoisted, key=lambda h: _order(site.call.call, h[0]))))


def _short(site: Site) -> str:
    qualname = site.callee.qualname  # type: ignore[attr-defined]
    owner, _, name = qualname.rpartition(".")
    base = owner if name == "forward" and owner else name
    return snake(base)


def _param_name(site: Site, slot: int | str) -> str:
    if isinstance(slot, str):
        return slot if slot != "**" else "kwargs"
    params = [p for p in site.callee.signature.params]  # type: ignore[attr-defined]
    offset = 1 if site.call.resolved.explicit_receiver else 0
    position = slot - offset
    return params[position].name if 0 <= position < len(params) else "arg"


def _slot_of(call: ast.Call, node: ast.expr) -> int | str:
    for i, arg in enumerate(call.args):
        if arg is node:
            return i
    return next(k.arg for k in call.keywords if k.value is node and k.arg is not None)


def _order(call: ast.Call, slot: int | str) -> int:
    if isinstance(slot, int):
        return slot
    return len(call.args) + next((i for i, k in enumerate(call.keywords) if (k.arg or "**") == slot), 0)


def _lower(step: FlowStep, sites: list[Site], syncs: list[_SiteSync], current: CurrentStream,
           join_event: Callable[[Site], EventRef]) -> list[Step]:
    sync = syncs[step.site]
    when = Cond.of(sync.flag) if step.may and sync.flag else sync.cond
    if isinstance(step, Relay):
        to = sites[step.to]
        switch = Cond.of(syncs[step.to].guard_text) if syncs[step.to].guard_text else None
        return [StreamWait(event=join_event(sites[step.site]), stream=to.tag, switch=switch, when=when)]
    assert isinstance(step, Join)
    out: list[Step] = [Wait(event=join_event(sites[step.site]), when=when)]
    if step.names:
        values = tuple(Value(name=n) for n in sorted(step.names))
        out.append(KeepAlive(stream=current, when=when, values=values))
    return out


def _place_call(steps: dict[Anchor, list[Step]], site: Site, sync: _SiteSync, same_stream: set[str]) -> None:
    """Before the call, after its joins: bound arguments and the flag of a guarded call, then its relays, then
    the crossing tensors kept alive for its stream. After it: the flag of a call that always forks."""
    call = site.call.call
    bound: list[Step] = [Assign(name=name, value=ast.unparse(_slot_node(call, slot))) for slot, name in sync.hoisted]
    if sync.flag and sync.guard_text:
        bound.append(Assign(name=sync.flag, value=sync.guard_text))
    names = dict(sync.hoisted)
    values = tuple(Value(name=names.get(a.slot, a.name) or "", tensor=a.tensor) for a in site.args
                   if a.name not in same_stream or a.name is None)
    keep = [KeepAlive(stream=site.tag, when=Cond.of(sync.guard_text), values=_unique(values))] if values else []
    anchor: Anchor = ("before", site.stmt, "")
    placed = steps.get(anchor, [])
    waits = [s for s in placed if isinstance(s, (Wait, KeepAlive))]
    relays = [s for s in placed if isinstance(s, StreamWait)]
    steps[anchor] = [*waits, *bound, *relays, *keep]
    if sync.flag and not sync.guard_text:
        steps.setdefault(("after", site.stmt, ""), []).append(Assign(name=sync.flag, value="True"))


def _slot_node(call: ast.Call, slot: int | str) -> ast.expr:
    if isinstance(slot, int):
        node = call.args[slot]
        return node.value if isinstance(node, ast.Starred) else node
    return next(k.value for k in call.keywords if (k.arg or "**") == slot)


def _unique(values: tuple[Value, ...]) -> tuple[Value, ...]:
    seen: dict[str, Value] = {}
    for value in values:
        seen.setdefault(value.name, value)
    return tuple(seen.values())
