"""A call that runs only after an earlier call on its stream records that call's join event, so one wait joins both.

vllm-ascend's DeepSeek-V4 indexer updates its key cache under ``if k is not None:`` and its scale cache, given
the key update's ``kv_scale``, under ``if k is not None and kv_scale is not None:``, both on the overlap stream;
the caller joins both before it returns. Each recorded its own join event and the caller waited for each, under
the flag of each. But the scale update runs only where the key update ran before it (it is given a result only
that call binds: ``call_bound.py``), on the same stream under the same guard: where it ran, the last record of the
key update's event is its own, and a wait for that event joins both; where it did not, that wait joins the key
update alone. So it records the key update's event, and its own wait goes (``tidy.waited_with``).

Only where the two are joined at the same places and nowhere else (a wait for the earlier call alone, placed
after the later one, would wait for it too), are relayed to no other stream, stand in no loop, and no other
call records either event.
"""

from __future__ import annotations

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.sites import Site
from codegen.lower.flow.transfer import Join, Relay
from codegen.lower.plan import Anchor

__all__ = ["shared_joins"]


def shared_joins(facts: CallerFacts) -> dict[int, int]:
    """Each call that records the join event of an earlier call -> that call (by site index)."""
    only: dict[str, frozenset[int]] = getattr(facts.relations, "made_only_by", {})
    found: dict[int, int] = {}
    for site in facts.sites:
        binders = {i for a in site.args if a.bare for i in only.get(a.name or "", frozenset())}
        earlier = facts.sites[next(iter(binders))] if len(binders) == 1 else None
        if earlier is not None and _shares(facts, earlier, site):
            found[site.index] = earlier.index
    return found


def _shares(facts: CallerFacts, earlier: Site, later: Site) -> bool:
    """One stream and one guard read once (each forks wherever the other does), in no loop, no other call of
    either callee, joined at the same places only."""
    relations, syncs = facts.relations, facts.syncs
    same = relations.covers(earlier.index, later.index) and relations.covers(later.index, earlier.index)
    same = same and facts.same_guard(syncs[earlier.index].guard_text, syncs[later.index].guard_text)
    keys = [s.callee.key for s in facts.sites]  # type: ignore[attr-defined]
    alone = keys.count(earlier.callee.key) == 1 and keys.count(later.callee.key) == 1  # type: ignore[attr-defined]
    looped = earlier.stmt in facts.looped or later.stmt in facts.looped
    if not same or not alone or looped or earlier.index >= later.index:
        return False
    anchors = _joined_at(facts, earlier.index)
    return bool(anchors) and anchors == _joined_at(facts, later.index)


def _joined_at(facts: CallerFacts, index: int) -> set[Anchor] | None:
    """Where the call is joined (None: it is relayed to another stream somewhere)."""
    found: set[Anchor] = set()
    for anchor, steps in facts.result.steps.items():
        for step in steps:
            if isinstance(step, Relay) and index in (step.site, step.to):
                return None
            if isinstance(step, Join) and step.site == index:
                found.add(anchor)
    return found
