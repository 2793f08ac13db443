"""The abstract state of the sync analysis at a point of the caller: what each planned stream call did.

For each call site that forked on some path reaching the point, a :class:`Pending` entry says:
``forked``, whether it forked on *every* path (a wait for its event is then valid everywhere; else a
flag set at the call must guard the wait); ``pending``, whether on some path it is not joined yet;
``names``, the variables that may still hold (a part of) its result, ``unsure`` those of them that some path
reaching the point binds to something else (``sure``: the rest); ``covers``, the calls whose
joins a join of this one makes redundant (calls on its stream forked before it, calls relayed into it); ``where``,
facts of fixed tests true on every path where it is pending (``fixed_tests.py``: joined where they are false).
``None`` stands for an unreachable point.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

__all__ = ["EMPTY", "Pending", "State", "fork", "joined", "merge", "pending", "renamed"]


@attrs.frozen
class Pending:
    site: int
    forked: bool
    pending: bool = True
    names: frozenset[str] = frozenset()
    covers: frozenset[int] = frozenset()
    inputs: frozenset[str] = frozenset()  # the caller's names whose memory the call reads (no in-place write)
    unsure: frozenset[str] = frozenset()  # of ``names``, those another path may bind to something else
    where: frozenset[tuple[str, bool]] = frozenset()  # facts of fixed tests where it is pending (``if_facts.Fact``)

    @property
    def sure(self) -> frozenset[str]:
        """The names that hold (a part of) its result on every path reaching the point."""
        return self.names - self.unsure


State = tuple[Pending, ...]  # sorted by site, one entry per site
EMPTY: State = ()


def _sorted(entries: Iterable[Pending]) -> State:
    return tuple(sorted((p for p in entries if p.pending or p.forked), key=lambda p: p.site))


def merge(*states: State | None) -> State | None:
    """Where paths meet: forked only if forked on all of them, pending if pending on any."""
    reached = [s for s in states if s is not None]
    if not reached:
        return None
    if len(reached) == 1:
        return reached[0]
    merged = []
    live = [frozenset(p.site for p in pending(s)) for s in reached]  # the calls pending on each path
    for site in sorted({p.site for s in reached for p in s}):
        found = [next((p for p in s if p.site == site), None) for s in reached]
        present = [p for p in found if p is not None]
        facts = [p.where for p in present if p.pending]
        covers = _merged_covers(found, live)
        names = frozenset().union(*(p.names for p in present))
        common = frozenset.intersection(*(p.names for p in present)) if len(present) == len(found) else frozenset()
        merged.append(
            Pending(
                site=site,
                forked=all(p is not None and p.forked for p in found),
                pending=any(p.pending for p in present),
                names=names,
                covers=covers,
                inputs=frozenset().union(*(p.inputs for p in present)),
                unsure=frozenset().union(*(p.unsure for p in present)) | (names - common),
                where=frozenset.intersection(*facts) if facts else frozenset(),
            )
        )
    return _sorted(merged)


def _merged_covers(found: list[Pending | None], live: list[frozenset[int]]) -> frozenset[int]:
    """What a join of the site covers where paths meet (``found``: its entry on each path, ``live``: the calls
    pending on each): a call it covers on every path where that call is pending. Where the site is joined (or never
    forked) and the call is pending, the call forked after the site's last record (a loop came back to it, a branch
    forked it again): a wait for the site's event does not order it there."""
    candidates = frozenset().union(*(p.covers for p in found if p is not None and p.pending))
    return frozenset(c for c in candidates if all(_covered(p, c, on) for p, on in zip(found, live)))


def _covered(entry: Pending | None, call: int, live: frozenset[int]) -> bool:
    """On one path: ``call`` is not pending there, or ``entry`` is pending there and covers it."""
    return call not in live or (entry is not None and entry.pending and call in entry.covers)


def pending(state: State) -> list[Pending]:
    return [p for p in state if p.pending]


def joined(state: State, sites: Iterable[int]) -> State:
    """The state after joining ``sites`` (and, for each joined on every path, the calls it covers)."""
    done = set(sites)
    grew = True
    while grew:  # covering chains: ``c`` relayed into ``d``, ``b`` on ``c``'s stream before it
        grew = False
        for p in state:
            if p.site in done and p.forked and not p.covers <= done:
                done |= p.covers
                grew = True
    return _sorted(
        attrs.evolve(p, pending=False, names=frozenset(), covers=frozenset(), inputs=frozenset(), unsure=frozenset())
        if p.site in done
        else p
        for p in state
    )


def renamed(state: State, update: dict[int, frozenset[str]], unsure: dict[int, frozenset[str]] | None = None) -> State:
    """New names for some entries, ``unsure`` of them those that hold something else too; where an entry has
    unsure names, a name it gains (an alias, maybe of one of them) is unsure too."""
    more = unsure or {}
    return tuple(
        attrs.evolve(p, names=update[p.site], unsure=_unsure(p, update[p.site]) | more.get(p.site, frozenset()))
        if p.site in update and not _same(p, update[p.site], more.get(p.site))
        else p
        for p in state
    )


def _same(entry: Pending, names: frozenset[str], unsure: frozenset[str] | None) -> bool:
    """Renaming leaves ``entry`` as it is (most statements bind none of its names): no new entry is made."""
    return names == entry.names and (not unsure or unsure <= entry.unsure)


def _unsure(entry: Pending, names: frozenset[str]) -> frozenset[str]:
    return entry.unsure | (names - entry.names) if entry.unsure else entry.unsure


def fork(
    state: State, site: int, names: frozenset[str], covers: Iterable[int], inputs: frozenset[str] = frozenset()
) -> State:
    """``site`` forks (again): a later wait for its event also covers an earlier fork of it on the same
    stream, so the names add up; no other call covers it any more (it forked after them)."""
    old = next((p for p in state if p.site == site), None)
    fresh, names = names, names | (old.names if old is not None and old.pending else frozenset())
    inputs = inputs | (old.inputs if old is not None and old.pending else frozenset())
    unsure = (old.unsure if old is not None and old.pending else frozenset()) - fresh
    rest = [attrs.evolve(p, covers=p.covers - {site}) if site in p.covers else p for p in state if p.site != site]
    entry = Pending(
        site=site, forked=True, names=names, covers=frozenset(covers) - {site}, inputs=inputs, unsure=unsure
    )
    return _sorted([*rest, entry])
