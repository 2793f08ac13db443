"""A call on another stream between a side call's fork and the call itself, using memory the call writes or
writing memory it reads: the side call must be ordered after it, and no earlier record orders it so.

A side call may do without a fork of its own where an earlier fork of its stream already ordered it after the
caller's work (``fork.py``: an earlier call on its stream forked; ``reuse.py``: it waits for an earlier record;
``bound_fork.py``: the calls binding its input forked). Those rules look at the caller's stream between that
fork and the call. A planned call on a third stream issued there is not the caller's stream's work: the side
stream is not ordered after it, even where the caller's stream joins it before the call. So

    a = self.first(x)          # side, forks
    e = self.elsewhere(cache)  # other: reads cache
    b = self.second(a, cache)  # side: writes cache in place

let ``second``'s write land before ``elsewhere``'s read on main (the race checker: read on 'other', written on
'side' with no wait in between). Where such a call stands between, the side call forks anew: the caller's
stream records after its wait for the third stream's join, and the side stream waits for that record.
"""

from __future__ import annotations

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.paths_meet import any_meet
from codegen.lower.flow.sites import Site

__all__ = ["crossed_since", "touches_across"]


def touches_across(facts: CallerFacts, site: Site, other: Site) -> bool:
    """``other``, on another stream, reads or writes memory ``site`` writes, or writes memory it reads."""
    if other.tag == site.tag:
        return False
    mine, theirs = facts.planned.views.get(site.stmt), facts.planned.views.get(other.stmt)
    if mine is None or theirs is None:
        return True
    names = mine.writes & (theirs.inputs | theirs.writes) or theirs.writes & (mine.inputs | mine.writes)
    state = any_meet(mine.state_writes, theirs.state | theirs.state_writes) or any_meet(theirs.state_writes, mine.state)
    return bool(names) or state


def crossed_since(facts: CallerFacts, site: Site, since: int) -> bool:
    """A call after the call ``since`` and before ``site`` in source order touches across (above)."""
    return any(touches_across(facts, site, other) for other in facts.sites[since + 1 : site.index])
