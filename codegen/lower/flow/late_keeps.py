"""An input the caller made, kept alive for a side stream where the caller's stream first allocates, not at the fork.

``record_stream(x, side)`` is needed only when the caller's stream may hand ``x``'s memory to a new tensor while
the side stream still reads it: after ``x``'s last use on the caller's stream, before the join. The keep decided
at the fork (``keep_alive.py``) covers every path; on a path that joins before the caller's stream allocates
(vllm-ascend's dense first layer, whose shared expert is joined right away), it is one call too many. So, once
the wraps are final (after ``one_block``), each keep of a name the caller made walks the paths from the call to
its join (the call's own, or that of a later call on its stream that covers it, ``relations.covers``) and moves
to just before the first statement that may allocate on the caller's stream on each path that has one (a split
statement whose first operand runs before the wait included), under the covering call's guard; where no path
has one, it goes. Statements wrapped on a stream whose guard holds wherever the call forked run no op on the
caller's stream.

The paths are followed by :mod:`~codegen.lower.flow.alloc_paths`. The keep stays at the fork where it cannot follow
one, where the first statement after the call allocates, where another call on the stream reads the name (its
own keep may have been left to this one: ``kept_earlier.py``), and where the call's fork is read into a
flag that the caller does not clear as it starts (``alloc_paths.flagged``: no place outside its block could read it).
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.alloc_paths import first_allocations, flagged
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names, data_reads
from codegen.lower.flow.keep_alive import split_of
from codegen.lower.flow.sites import Site
from codegen.lower.plan import Anchor, Cond, KeepAlive, Step, Value, Wrap

__all__ = ["late_keeps"]

Steps = dict[Anchor, list[Step]]


def late_keeps(wraps: dict[ast.stmt, Wrap], facts: CallerFacts, steps: Steps, applied: dict[ast.stmt, str]) -> None:
    """Each call's keeps of names its caller made moved to where the caller's stream first allocates before the
    join (``wraps`` and ``steps`` changed in place; ``applied``: the split statements)."""
    for site in facts.sites:
        keep, where = _keep_of(site, wraps, steps)
        if keep is None or site.stmt in facts.looped or (facts.syncs[site.index].flag and not flagged(facts, site)):
            continue
        unless = _unless(facts, site, keep)
        stay = tuple(v for v in keep.values if not _moved(facts, site, v, (wraps, steps, unless), applied))
        _replace(site, keep, stay, where, wraps, steps)


def _moved(
    facts: CallerFacts,
    site: Site,
    value: Value,
    plan: tuple[dict[ast.stmt, Wrap], Steps, tuple[str, ...]],
    applied: dict[ast.stmt, str],
) -> bool:
    """``value``'s keep placed before each first allocation after the call (none: it goes); False: it stays
    (``plan``: the wraps, the steps, and the terms the keep holds beyond the call's guard, which it keeps)."""
    wraps, steps, unless = plan
    places = first_allocations(facts, site, value.name, wraps, applied) if _movable(facts, site, value) else None
    for stmt, when in places or ():
        keep = KeepAlive(stream=site.tag, when=Cond.of(when, *unless), values=(value,))
        steps.setdefault(("before", stmt, ""), []).insert(0, keep)
    return places is not None


def _unless(facts: CallerFacts, site: Site, keep: KeepAlive) -> tuple[str, ...]:
    """The terms of ``keep``'s condition beyond the call's guard (``held_where.py``: made only where the callers
    read the value no more)."""
    sync = facts.syncs[site.index]
    guard = Cond.of(sync.flag) if sync.flag and sync.guard_text else Cond.of(sync.guard_text)
    terms = guard.terms if guard is not None else ()
    return tuple(t for t in keep.when.terms if t not in terms) if keep.when is not None else ()


def _keep_of(site: Site, wraps: dict[ast.stmt, Wrap], steps: Steps) -> tuple[KeepAlive | None, str]:
    """The call's keep for its stream: first in its ``with`` (``"wrap"``), or before it once ``one_block`` took
    its ``with`` into the next call's (``"steps"``)."""
    wrap = wraps.get(site.stmt)
    found = list(wrap.enter) if wrap is not None else steps.get(("before", site.stmt, ""), [])
    keeps = [s for s in found if isinstance(s, KeepAlive) and s.stream == site.tag and s.values]
    return (keeps[0], "wrap" if wrap is not None else "steps") if len(keeps) == 1 else (None, "")


def _replace(
    site: Site, keep: KeepAlive, stay: tuple[Value, ...], where: str, wraps: dict[ast.stmt, Wrap], steps: Steps
) -> None:
    if stay == keep.values:
        return
    kept = [attrs.evolve(keep, values=stay)] if stay else []
    if where == "wrap":
        wrap = wraps[site.stmt]
        enter = [new for s in wrap.enter for new in (kept if s is keep else [s])]
        wraps[site.stmt] = attrs.evolve(wrap, enter=tuple(enter))
    else:
        anchor = ("before", site.stmt, "")
        steps[anchor] = [new for s in steps[anchor] for new in (kept if s is keep else [s])]


def _movable(facts: CallerFacts, site: Site, value: Value) -> bool:
    """A plain name the caller made (no call's result, no computed argument, no split's view), read by no other
    call on the stream."""
    name = value.name
    made_by_calls = {n for other in facts.sites for n in bound_names(other.stmt)}
    hoisted = {n for _, n in facts.syncs[site.index].hoisted}
    others = [o for o in facts.sites if o is not site and o.tag == site.tag]
    return (
        name.isidentifier()
        and name != facts.receiver
        and name not in made_by_calls | hoisted
        and split_of(facts, site.stmt, name) is None
        and not any(name in data_reads(o.stmt) for o in others)
    )
