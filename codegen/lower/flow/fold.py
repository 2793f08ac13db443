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
        if first in wraps and (keep := _moved_keep(stmt, wrap, first, wraps[first], steps)) is not None:
            wraps[first] = _with_kept(wraps[first], keep)
            wraps[stmt] = attrs.evolve(wrap, enter=())
    return wraps


def _moved_keep(stmt: ast.stmt, wrap: Wrap, first: ast.stmt, earlier: Wrap, steps: Steps) -> KeepAlive | None:
    """The call's one step, keeping its inputs alive, where the wrap of ``first`` (the statement right before it,
    on the same stream, with nothing placed between the two and binding none of them) can take it over."""
    keep = [s for s in wrap.enter if isinstance(s, KeepAlive)]
    if (
        len(keep) != 1
        or len(wrap.enter) != 1
        or earlier.switch != wrap.switch
        or steps.get(("before", stmt, ""))
        or steps.get(("after", first, ""))
        or earlier.leave
        or {v.name for v in keep[0].values} & bound_names(first)
    ):
        return None
    return keep[0]


def _with_kept(earlier: Wrap, keep: KeepAlive) -> Wrap:
    """``earlier`` keeping alive what ``keep`` does too: in its own keep on that stream under the same condition (a
    keep made only where callers read no more, ``held_where.py``, stays apart), or after its steps."""
    kept = [s for s in earlier.enter if isinstance(s, KeepAlive) and s.stream == keep.stream and s.when == keep.when]
    if not kept:
        return attrs.evolve(earlier, enter=(*earlier.enter, keep))
    moved = attrs.evolve(kept[0], values=(*kept[0].values, *keep.values))
    return attrs.evolve(earlier, enter=tuple(moved if s is kept[0] else s for s in earlier.enter))
