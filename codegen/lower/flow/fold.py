"""Calls at one point share their sync: two calls forked at one point share one record (on the same stream,
its wait too), and consecutive calls on one stream share one ``with``.

Each works on what :mod:`codegen.lower.flow.wraps` has decided so far (the steps by anchor, the wraps by
statement, the forks made so far), as :mod:`codegen.lower.flow.tidy` does.
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.sites import Site
from codegen.lower.plan import Anchor, EventRef, KeepAlive, Step, Wrap

__all__ = ["Fork", "folded", "same_point"]

Fork = tuple[EventRef, str | None, frozenset[str]]  # a fork's event, guard, and the streams that waited for it
Steps = dict[Anchor, list[Step]]


def same_point(
    facts: CallerFacts, site: Site, before: list[Step], steps: Steps, forked_at: dict[ast.stmt, Fork]
) -> Fork | None:
    """The fork of the call just before this one, when nothing runs on the caller's stream between the two
    (one record serves both; on the same stream, its wait does too)."""
    sync = facts.syncs[site.index]
    block = facts.block(site.stmt)
    at = block.index(site.stmt)
    if at == 0 or before or sync.flag or steps.get(("before", site.stmt, "")):
        return None
    found = forked_at.get(block[at - 1])
    return found if found is not None and facts.same_guard(found[1], sync.guard_text) else None


def folded(wraps: dict[ast.stmt, Wrap], blocks: dict[ast.stmt, list[ast.stmt]], steps: Steps) -> dict[ast.stmt, Wrap]:
    """Consecutive calls on one stream share one ``with``: the inputs a later one keeps alive are kept with
    the first one's (one guarded block), unless the first one's statement binds them."""
    for stmt, wrap in list(wraps.items()):
        block = blocks.get(stmt, [stmt])
        at = block.index(stmt)
        first = block[at - 1] if at else None
        keep = [s for s in wrap.enter if isinstance(s, KeepAlive)]
        if (
            first not in wraps
            or len(keep) != 1
            or len(wrap.enter) != 1
            or wraps[first].switch != wrap.switch
            or steps.get(("before", stmt, ""))
            or steps.get(("after", first, ""))
            or wraps[first].leave
            or {v.name for v in keep[0].values} & bound_names(first)
        ):
            continue
        earlier = wraps[first]
        kept = [s for s in earlier.enter if isinstance(s, KeepAlive) and s.stream == keep[0].stream]
        moved = attrs.evolve(kept[0], values=(*kept[0].values, *keep[0].values)) if kept else keep[0]
        enter = tuple(moved if s is (kept[0] if kept else None) else s for s in earlier.enter)
        wraps[first] = attrs.evolve(earlier, enter=enter if kept else (*earlier.enter, moved))
        wraps[stmt] = attrs.evolve(wrap, enter=())
    return wraps
