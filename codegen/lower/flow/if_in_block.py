"""An ``if`` holding a call on a side stream, right after a call on that stream, runs in that call's block.

vllm-ascend's DeepSeek-V4 indexer quantizes the compressed keys into its key cache on the overlap stream, then,
``if kv is not None and kv_scale is not None:``, writes their scales into the scale cache there too. As two
blocks, the side stream is switched to twice and the first call records its join event for the paths where the
second does not run. A careful engineer writes one ``with``: the ``if`` inside it, after the first call, and the
join recorded once, at its end. The ``if`` joins the first call's block when:

- its test runs no op, so the side stream may read it: names and constants compared by identity (``is``,
  ``is not``), joined by ``and``/``or``/``not`` (``quiet_tests.identity_test``; testing a result of the first call
  so reads none of its data);
- it has no ``else``, and its body is one planned call on the same stream and priority, under a guard that
  holds exactly where the first call's does (the planner's keys, ``relations.covers`` both ways);
- that call needs no fork of its own: nothing runs before it on the caller's stream but the reading of its guard
  into its flag (a record there would be issued on the side stream), and nothing after it but flags set;
- nothing is placed between the first call and the ``if``.

Where the second call records the first call's join event (``shared_join.py``), the first call's record moves to
the end of the block, after the ``if``, and covers both; the second call's flag goes where nothing reads it then.
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.quiet_tests import identity_test
from codegen.lower.flow.sites import Site
from codegen.lower.plan import Anchor, Assign, Cond, Record, Step, Wrap

__all__ = ["flags_unread", "if_in_block"]

Steps = dict[Anchor, list[Step]]


def if_in_block(wraps: dict[ast.stmt, Wrap], facts: CallerFacts, steps: Steps) -> list[Site]:
    """Each qualifying ``if`` put in the block of the call before it (``wraps`` and ``steps`` changed in place);
    the calls so taken into a block."""
    by_stmt = {site.stmt: site for site in facts.sites}
    taken: list[Site] = []
    for first in facts.sites:
        found = _following(first, wraps, facts, steps, by_stmt)
        if found is not None:
            _joined(wraps, steps, first, found, facts.syncs[by_stmt[found.body[0]].index].flag)
            taken.append(by_stmt[found.body[0]])
    return taken


def _following(
    first: Site, wraps: dict[ast.stmt, Wrap], facts: CallerFacts, steps: Steps, by_stmt: dict[ast.stmt, Site]
) -> ast.If | None:
    """The ``if`` right after ``first``'s statement in its block, where it qualifies."""
    block = facts.block(first.stmt)
    at = block.index(first.stmt)
    outer = block[at + 1] if first.stmt in wraps and at + 1 < len(block) else None
    if not isinstance(outer, ast.If) or outer.orelse or len(outer.body) != 1 or not identity_test(outer.test):
        return None
    then = by_stmt.get(outer.body[0])
    if then is None or then.stmt not in wraps or steps.get(("after", first.stmt, "")):
        return None
    if steps.get(("before", outer, "")) or steps.get(("end", outer, "body")):
        return None
    one = facts.relations.covers(first.index, then.index) and facts.relations.covers(then.index, first.index)
    switch, other = wraps[first.stmt].switch, wraps[then.stmt].switch
    same = (switch.tag, switch.priority) == (other.tag, other.priority)
    return outer if one and same and _unforked(then, facts, steps) else None


def _unforked(then: Site, facts: CallerFacts, steps: Steps) -> bool:
    """Before the call, only its guard read into its flag; after it, only flags set (no op, nothing recorded)."""
    sync = facts.syncs[then.index]
    flag = Assign(name=sync.flag, value=sync.guard_text) if sync.flag and sync.guard_text else None
    before = steps.get(("before", then.stmt, ""), [])
    after = steps.get(("after", then.stmt, ""), [])
    return all(s == flag for s in before) and all(isinstance(s, Assign) and s.value == "True" for s in after)


def _joined(wraps: dict[ast.stmt, Wrap], steps: Steps, first: Site, outer: ast.If, flag: str | None) -> None:
    """``outer`` in ``first``'s block; the second call's steps inside the ``if``, read under the block's condition
    (its own ``flag`` holds the same value there), its record of the same join event dropped for the first call's,
    moved after the ``if``."""
    then = outer.body[0]
    own, inner = wraps[first.stmt], wraps.pop(then)
    shared = bool(own.leave) and _events(inner.leave) == _events(own.leave)
    wraps[first.stmt] = attrs.evolve(own, leave=() if shared else own.leave)
    wraps[outer] = Wrap(switch=own.switch, leave=own.leave if shared else ())
    steps.setdefault(("before", then, ""), []).extend(_renamed(s, flag, own.switch.when) for s in inner.enter)
    if not shared:
        steps.setdefault(("after", then, ""), []).extend(_renamed(s, flag, own.switch.when) for s in inner.leave)


def _events(leave: tuple[Step, ...]) -> list[object] | None:
    """The events ``leave`` records (None: it does more than record)."""
    records = [s for s in leave if isinstance(s, Record)]
    return [s.event for s in records] if len(records) == len(leave) else None


def _renamed(step: Step, flag: str | None, block: Cond | None) -> Step:
    """``step`` read under ``block`` where it was read under ``flag``."""
    when = getattr(step, "when", None)
    if flag is None or when is None or flag not in when.terms:
        return step
    return attrs.evolve(step, when=Cond.of(block, *(t for t in when.terms if t != flag)))


def flags_unread(wraps: dict[ast.stmt, Wrap], facts: CallerFacts, steps: Steps, taken: list[Site]) -> set[str]:
    """Of the calls taken into a block, the flags their guard is read into that no step reads any more, once the
    other steps are placed (their assignments dropped from ``steps``)."""
    conds = [getattr(s, "when", None) for found in steps.values() for s in found]
    conds += [w.switch.when for w in wraps.values()]
    conds += [getattr(s, "when", None) for w in wraps.values() for s in (*w.enter, *w.leave)]
    read = {term for c in conds if c is not None for term in c.terms}
    unread: set[str] = set()
    for site in taken:
        sync = facts.syncs[site.index]
        if sync.flag and sync.guard_text and sync.flag not in read:
            before = steps.get(("before", site.stmt, ""), [])
            steps[("before", site.stmt, "")] = [s for s in before if not _assigns(s, sync.flag)]
            unread.add(sync.flag)
    return unread


def _assigns(step: Step, flag: str) -> bool:
    return isinstance(step, Assign) and step.name == flag
