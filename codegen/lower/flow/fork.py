"""Whether a planned call forks: the caller's stream records, and the call's stream waits first thing.

A call forks when it reads anything its side stream did not make itself (nor a stream it surely waits for
first), or when nothing orders it after the caller's work yet, as for the first call on that stream in the
function: so memory the side stream frees and reuses is never still read by work the caller issued before.
"""

from __future__ import annotations

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.crossing_calls import crossed_since
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state import State, pending
from codegen.lower.flow.statements import argument_names
from codegen.lower.flow.transfer import Relations
from codegen.lower.flow.written_state import written_since

__all__ = ["call_inputs", "forks", "same_stream"]


def same_stream(state: State, site: Site, relations: Relations) -> set[str]:
    """The names that hold results the site's stream made itself on every path (nothing to order or keep alive
    for it); a name only calls bind holds such a result wherever it is read, when each of those calls is on the
    site's stream (``call_bound.py``)."""
    only: dict[str, frozenset[int]] = getattr(relations, "made_only_by", {})
    found: set[str] = set()
    for p in pending(state):
        if relations.consume(p.site, site.index) == "none":
            found |= p.sure | {n for n in p.unsure if _made_here(only.get(n, frozenset()), site, relations)}
    return found


def _made_here(binders: frozenset[int], site: Site, relations: Relations) -> bool:
    return bool(binders) and all(relations.consume(b, site.index) == "none" for b in binders)


def forks(facts: CallerFacts, sure: dict[int, set[int]]) -> list[bool]:
    """Whether each call forks, by site index (``sure``: call -> the calls on other streams it surely waits
    for first)."""
    anchored: list[bool] = []  # per call so far: ordered after the caller's work before it
    return [_forks(facts, site, sure.get(site.index, set()), anchored) for site in facts.sites]


def _forks(facts: CallerFacts, site: Site, relayed: set[int], anchored: list[bool]) -> bool:
    """Whether the call must wait for the caller's stream: it reads what neither its stream nor a stream it
    surely waits for first (``relayed``) made, or nothing orders it after the caller's work: no earlier call
    on its stream forked on every path to it, and none of the streams it waits for did."""
    if not site.callee.auto:  # type: ignore[attr-defined]
        anchored.append(False)
        return False
    state = facts.result.states.get(site.stmt, ())
    covered = [p.site for p in state if p.forked and facts.relations.covers(p.site, site.index)]
    earlier = any(not crossed_since(facts, site, p) and not written_since(facts, site, p) for p in covered)
    relays = any(i < len(anchored) and anchored[i] for i in relayed) and not written_since(facts, site, None)
    ordered = earlier or relays  # no third stream's call, no state it reads written between: written_state.py
    made = same_stream(state, site, facts.relations).union(*(facts.sites[i].names for i in relayed))
    forks = not (ordered and call_inputs(facts, site) <= made)
    anchored.append(forks or ordered)
    return forks


def call_inputs(facts: CallerFacts, site: Site) -> set[str]:
    """The caller's names whose values the call reads (its arguments, bare or inside expressions)."""
    hoisted = dict(facts.syncs[site.index].hoisted)
    names = {name for argument in site.args for name in argument_names(argument, facts.receiver, hoisted)}
    return names | site.state_inputs  # the objects the caller changed, which the call reads (state_keeps.py)
