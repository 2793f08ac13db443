"""The effect of one simple statement on the pending stream calls: joins before it, relays, names it binds.

A pending call is joined just before the first statement that reads (the data of) a name holding
its result, or that returns. A name passed bare to another planned stream call is not read by the
caller's stream: that call's stream waits for the producing stream directly (a *relay*), or, on the
same stream, needs nothing. ``y = x`` and ``t = (x, z)`` only copy references: the new names hold
the result too. Rebinding or deleting a name drops it.
"""

from __future__ import annotations

import ast
from collections.abc import Set
from typing import Protocol

import attrs

from codegen.lower.flow.exprs import bound_names, data_reads, deleted_names
from codegen.lower.flow.schema import views_self
from codegen.lower.flow.state import Pending, State, fork, joined, pending, renamed
from codegen.lower.flow.writes import inplace_writes, state_reads

__all__ = ["Join", "Relations", "Relay", "SiteView", "Step", "aliasing", "join_step", "transfer", "views_of"]


@attrs.frozen
class Join:
    """The caller's stream waits for ``site`` here; ``may``: only if it forked (a flag set at the call says).
    ``names``: what the caller may read of the joined results afterwards (kept alive for its stream)."""

    site: int
    may: bool
    names: frozenset[str] = attrs.field(default=frozenset(), eq=False)


@attrs.frozen
class Relay:
    """The stream of ``to`` waits for the stream of ``site`` here (the caller's stream does not)."""

    site: int
    to: int
    may: bool


Step = Join | Relay


class Relations(Protocol):
    """How two planned calls relate, as the planner knows from their streams and guards."""

    def consume(self, producer: int, consumer: int) -> str:
        """``producer``'s result passed to ``consumer``: "none" (same stream), "relay", or "join"."""

    def covers(self, earlier: int, later: int) -> bool:
        """Joining ``later`` also joins ``earlier`` (same stream, and ``later`` forks whenever ``earlier`` did)."""


@attrs.frozen(kw_only=True)
class SiteView:
    """What the analysis needs to know of a planned call site."""

    index: int
    names: frozenset[str]  # the names its statement binds to the result
    bare: frozenset[str]  # names passed to it as whole arguments
    reads: frozenset[str]  # what the statement reads on the caller's stream (bare arguments excluded)
    guarded: bool = False  # whether it forks depends on a value that may change between two of its calls
    inputs: frozenset[str] = frozenset()  # the caller's names whose memory the call reads
    event: str = ""  # the callee: calls of one callee record one join event
    state: frozenset[str] = frozenset()  # what of objects' state the call reads (its body's on its stream)
    writes: frozenset[str] = frozenset()  # the caller's names whose memory the call writes in place (sites.py)


def join_step(entry: Pending, state: State) -> Join:
    """The join of ``entry``, holding the names of the calls it covers too."""
    covered = entry.covers if entry.forked else frozenset()
    names = entry.names.union(*(p.names for p in pending(state) if p.site in covered))
    return Join(entry.site, not entry.forked, names)


def transfer(
    stmt: ast.stmt, state: State, site: SiteView | None, relations: Relations, methods: frozenset[str] = frozenset()
) -> tuple[list[Step], State]:
    """The steps placed before ``stmt`` and the state after it; ``methods``: the caller's own methods (a call of
    one may read any state of its object)."""
    if isinstance(stmt, ast.Return):
        steps = _minimal([join_step(p, state) for p in pending(state)], state)
        return steps, joined(state, (s.site for s in steps))
    reads = _reads(stmt) | state_reads(stmt, methods) if site is None else set(site.reads)
    written = inplace_writes(stmt) | (site.writes if site else getattr(relations, "dropped", {}).get(stmt, frozenset()))
    steps: list[Step] = [
        join_step(p, state)
        for p in pending(state)
        if touches(p.names, reads) or p.inputs & written or _state_crosses(p, site, relations)
    ]
    if site is not None:
        steps += _consumed(state, site, relations)
        steps += [join_step(p, state) for p in pending(state) if p.site == site.index and site.guarded]
    joins = _minimal([s for s in steps if isinstance(s, Join)], state)
    steps = [*joins, *(s for s in steps if isinstance(s, Relay))]
    state = _rebind(stmt, joined(state, (j.site for j in joins)))
    if site is not None:
        relayed = [s.site for s in steps if isinstance(s, Relay)]
        covered = [p.site for p in pending(state) if relations.covers(p.site, site.index)]
        state = fork(state, site.index, site.names, [*relayed, *covered], site.inputs)
    return steps, state


def _state_crosses(entry: Pending, site: SiteView | None, relations: Relations) -> bool:
    """The call reads state ``entry`` may have changed, on another stream (its own stream's needs no join)."""
    if site is None or not touches(entry.names, set(site.state)):
        return False
    return relations.consume(entry.site, site.index) != "none"


def touches(names: frozenset[str], reads: set[str]) -> bool:
    """``reads`` reads one of ``names``: a name, an attribute of an object (``self.buf``), or, through a wildcard
    (``self.*``) on either side, any attribute of that object."""
    if names & reads:
        return True
    held = {n[:-1] for n in names if n.endswith(".*")}
    called = {r[:-1] for r in reads if r.endswith(".*")}
    return any(r.startswith(p) for p in held for r in reads) or any(n.startswith(p) for p in called for n in names)


def _minimal(joins: list[Join], state: State) -> list[Join]:
    """Drop the joins another join here makes redundant (it covers them on every path)."""
    sites = {j.site for j in joins}
    covered = {c for p in state if p.site in sites and p.forked for c in p.covers}
    return [j for j in joins if j.site not in covered]


def _reads(stmt: ast.stmt) -> set[str]:
    if aliasing(stmt) is not None or isinstance(stmt, ast.Delete):
        return set()
    reads = data_reads(stmt)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        reads.add(stmt.target.id)
    return reads


def _consumed(state: State, site: SiteView, relations: Relations) -> list[Step]:
    """Pending results passed bare to ``site``: relayed to its stream, joined, or nothing on one stream."""
    steps: list[Step] = []
    for entry in pending(state):
        if entry.site == site.index or not entry.names & site.bare:
            continue
        how = relations.consume(entry.site, site.index)
        if how == "relay":
            steps.append(Relay(entry.site, site.index, not entry.forked))
        elif how == "join":
            steps.append(join_step(entry, state))
    return steps


def aliasing(stmt: ast.stmt) -> tuple[list[str], list[str]] | None:
    """``a = b`` / ``a, b = c, d`` / ``t = (a, b)`` / ``a = b.squeeze(-1)``: (targets, sources) when the statement
    only copies references or takes views (an op whose schema returns views of ``self``: no kernel reads data)."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    sources = [_viewed_name(s) for s in (value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value])]
    if not all(sources):
        return None
    return sorted(bound_names(target)), sources  # type: ignore[return-value]


def views_of(stmt: ast.stmt, made: Set[str]) -> bool:
    """``stmt`` binds views (or copies of references) of ``made`` only: it runs no kernel."""
    alias = aliasing(stmt)
    return alias is not None and set(alias[1]) <= made


def _viewed_name(node: ast.expr) -> str | None:
    """The name ``node`` is, or takes views of with constant arguments (``x.squeeze(-1).t()``, ``x[0, :2]``)."""
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Subscript) and _constant(node.slice):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and views_self(node.func.attr):
            if not all(_constant(a) for a in [*node.args, *(k.value for k in node.keywords)]):
                return None
            node = node.func.value
        else:
            return None
    return node.id


def _constant(node: ast.expr) -> bool:
    """A constant, a slice or tuple of them, or a minus sign on one (``-1``, ``:2``, ``(0, ...)``)."""
    return all(
        isinstance(n, (ast.Constant, ast.Slice, ast.Tuple, ast.UnaryOp, ast.USub, ast.Load)) for n in ast.walk(node)
    )


def _rebind(stmt: ast.stmt, state: State) -> State:
    """Names the statement binds or deletes no longer hold what they held; aliases hold it too, surely only where
    all they copy held it (``t = (q, g)`` holds the caller's ``g`` as well as ``q``)."""
    written = deleted_names(stmt) if isinstance(stmt, ast.Delete) else bound_names(stmt)
    groups = _alias_groups(stmt)
    update: dict[int, frozenset[str]] = {}
    mixed: dict[int, frozenset[str]] = {}
    for entry in state:
        names = set(entry.names - written)
        for targets, sources in groups:
            held = entry.names & sources
            if held:
                names |= targets
                mixed[entry.site] = mixed.get(entry.site, frozenset()) | (targets if held != sources else set())
        update[entry.site] = frozenset(names)
    return renamed(state, update, mixed)


def _alias_groups(stmt: ast.stmt) -> list[tuple[frozenset[str], frozenset[str]]]:
    """:func:`aliasing`'s targets and sources, paired one by one where a tuple of names is unpacked from a tuple of
    the same length (``a, b = q, g``: ``a`` holds ``q`` only), as one group otherwise."""
    alias = aliasing(stmt)
    if alias is None:
        return []
    target, value = stmt.targets[0], stmt.value  # type: ignore[attr-defined]
    pairs = isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
    if pairs and len(target.elts) == len(value.elts) and all(isinstance(e, ast.Name) for e in target.elts):
        return [(frozenset({t.id}), frozenset({s})) for t, s in zip(target.elts, alias[1])]
    return [(frozenset(alias[0]), frozenset(alias[1]))]
