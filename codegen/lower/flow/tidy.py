"""The lowering's last touches on a caller's steps: one wait per event, first operands before a wait, views
inside a stream's block, and no flag that nothing reads.

Each works on what :mod:`codegen.lower.flow.wraps` has decided so far (the steps by anchor, the wraps by
statement), and changes only how it is spelled: the same waits, records and keep-alives, fewer of them
where one already does the work.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from codegen.lower.flow.aliasing import views_of
from codegen.lower.flow.caller_facts import CallerFacts, any_may
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.spelling import spelled_expr
from codegen.lower.flow.transfer import Join, Relations
from codegen.lower.plan import Anchor, Assign, EventRef, Step, Wait, Wrap

__all__ = ["bound_before_waits", "cleared_flags", "glued", "unread_flags", "waited_with"]

Steps = dict[Anchor, list[Step]]


def waited_with(
    join: Join,
    anchor: Anchor,
    joins: list[tuple[Anchor, Join]],
    event_of: Callable[[int], EventRef],
    relations: Relations,
    joined_as: Mapping[int, int] = {},
) -> bool:
    """Another join at ``anchor`` waits for the same event whenever this one would: a call of the same callee,
    on the same stream under the same guard, forked on every path (this one only on some); or the call whose
    join event this one records, which ran wherever this one did (``shared_join.py``)."""
    if not join.may:
        return False
    event = event_of(join.site)
    return any(
        where == anchor
        and event_of(other.site) == event
        and other.where <= join.where  # it re-reads no test this one does not (``fixed_tests.py``)
        and (
            joined_as.get(join.site) == other.site
            or (not other.may and relations.covers(join.site, other.site) and relations.covers(other.site, join.site))
        )
        for where, other in joins
    )


def bound_before_waits(steps: Steps, splits: dict[ast.stmt, tuple[str, ast.expr]]) -> dict[ast.stmt, str]:
    """Where a split statement (``split.py``) waits, its first operand bound to its name before the wait; the
    statements so split, with that name."""
    done: dict[ast.stmt, str] = {}
    for stmt, (name, first) in splits.items():
        found = steps.get(("before", stmt, ""), [])
        if any(isinstance(s, Wait) for s in found):
            found.insert(0, Assign(name=name, value=spelled_expr(first)))
            done[stmt] = name
    return done


def glued(wraps: dict[ast.stmt, Wrap], blocks: dict[ast.stmt, list[ast.stmt]], steps: Steps) -> dict[ast.stmt, Wrap]:
    """A statement that only takes views of what the call before it made on its stream (``scale =
    scale.squeeze(-1)``: no kernel) between two calls on that stream runs inside their ``with`` too, so the
    two share one block."""
    for stmt, wrap in list(wraps.items()):
        block = blocks.get(stmt, [stmt])
        at = block.index(stmt)
        if at + 2 >= len(block) or wraps.get(block[at + 2]) is None or wrap.leave:
            continue
        glue, then = block[at + 1], block[at + 2]
        if wraps[then].switch != wrap.switch or glue in wraps or not views_of(glue, bound_names(stmt)):
            continue
        if not any(steps.get(anchor) for anchor in (("after", stmt, ""), ("before", glue, ""), ("before", then, ""))):
            wraps[glue] = Wrap(switch=wrap.switch)
    return wraps


def unread_flags(steps: Steps, wraps: dict[ast.stmt, Wrap], set_after: set[str]) -> set[str]:
    """Of the flags set to True after a call (``set_after``), those whose every reader went (a wait merged
    into another one of its event); their assignments go from ``steps``."""
    spelled = [*(s for found in steps.values() for s in found), *(s for w in wraps.values() for s in w.enter)]
    read = {term for s in spelled if getattr(s, "when", None) is not None for term in s.when.terms}  # type: ignore[union-attr]
    unread = set_after - read
    for anchor, found in steps.items():
        if anchor[0] == "after":
            steps[anchor] = [s for s in found if not (isinstance(s, Assign) and s.name in unread)]
    return unread


def cleared_flags(facts: CallerFacts, unread: set[str]) -> tuple[Step, ...]:
    """The flags cleared as the caller starts, read by a may-join on paths where the call did not run (``unread``:
    the flags no step reads any more)."""
    return tuple(
        Assign(name=s.flag, value="False")
        for s, site in zip(facts.syncs, facts.sites, strict=False)
        if s.flag and s.flag not in unread and any_may(facts.result, site.index)
    )
