"""``suggest --explain``: every call site the search looked at, and why it was or was not moved.

A site is moved (and saves so much for so many syncs); or it cannot be (the
reason its calls gave: nothing reads its result, moving it would race, it is
already on a stream, a decorator cannot single it out); or it is blocked by a
moved site (nested in one, or reading one's results); or the best place the
search found for it saves no more than its syncs cost, nothing at all when its
result is read right after the call and no statement above it may be passed
(a data dependency, or an effect the move would reorder).
"""

from __future__ import annotations

import attrs

from npudsl.suggest.dag import Unit
from npudsl.suggest.plan import Plan, Search
from npudsl.suggest.units import Site

__all__ = ["Candidate", "candidates"]


@attrs.frozen(kw_only=True)
class Candidate:
    site: Site
    calls: int
    moved: bool
    why: str


def _not_movable(units: tuple[Unit, ...]) -> str | None:
    problems = [
        u.problem or ("nothing reads its result" if u.join is None else "its ops take no time")
        for u in units
        if not u.movable
    ]
    return problems[0] if problems else None


def _best(search: Search, site: Site, units: tuple[Unit, ...], streams: int) -> float:
    return max((t.gain for t in search.tries(site, units, streams, search.makespan())), default=0.0)


def _too_small(search: Search, site: Site, units: tuple[Unit, ...], streams: int) -> str:
    syncs, best = 2 * len(units), _best(search, site, units, streams)
    if best <= syncs * search.sync_cost and len({m.stream for m in search.moves}) >= streams:
        more = _best(search, site, units, streams + 1)
        if more > syncs * search.sync_cost:
            return (
                f"no side stream left: the {streams} allowed are in use (with --streams {streams + 1} it "
                f"would save {more:.4g} us)"
            )
    if best <= 1e-9:
        return (
            "moving it gains nothing: what follows the call reads its result (a data dependency), no statement "
            "above it may be passed (a data dependency, or an effect the move would reorder), or what could "
            "run beside it already does"
        )
    return (
        f"too small for its syncs: at best it saves {best:.4g} us, its {syncs} syncs cost "
        f"{syncs * search.sync_cost:.4g} us"
    )


def _verdict(plan: Plan, site: Site, units: tuple[Unit, ...]) -> Candidate:
    move = next((m for m in plan.moves if m.site == site), None)
    if move is not None:
        up = ", its call moved up" if move.hoist else ""
        why = f"moved to stream {move.stream!r}{up}: saves {move.gain:.4g} us for {2 * len(units)} syncs"
        return Candidate(site=site, calls=len(units), moved=True, why=why)
    search = plan.search
    assert search is not None
    why = _not_movable(units) or search.blocked(units) or _too_small(search, site, units, plan.streams)
    return Candidate(site=site, calls=len(units), moved=False, why=why)


def candidates(plan: Plan, units: tuple[Unit, ...]) -> tuple[Candidate, ...]:
    """A verdict for every site of ``units``, in order of its first call."""
    by_site: dict[Site, list[Unit]] = {}
    for unit in units:
        by_site.setdefault(unit.instance.site, []).append(unit)
    return tuple(_verdict(plan, site, tuple(found)) for site, found in by_site.items())
