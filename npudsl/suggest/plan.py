"""Stage 3: choose which call sites go to which side stream, by the time they take off the critical path.

A decorator moves every call a site makes, so the choice is per :class:`Site`.
The search is a greedy list schedule on at most ``streams`` side streams: each
round predicts the timeline (:func:`~npudsl.suggest.simulate.predict`) for every
site not yet placed, on every stream in use and on one new stream, and keeps the
move that shortens the critical path (the predicted makespan) most; it stops when
no move saves more than the synchronization it adds: two syncs per call (the
fork and the join), each priced at ``sync_cost`` microseconds. A site whose
statement may move up in its block (:mod:`npudsl.suggest.hoist`) is also tried
at each place it may move to: the call starts earlier, its join stays. Sites
nested in, or holding, a placed site are not placed (streams do not nest), nor
are sites that read a placed site's results or whose results it reads: a side
stream reading another's result waits for it directly, and the main stream
joins later, which neither the prediction nor the window checks of
:mod:`npudsl.suggest.dag` follow.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import torch.fx

from npudsl.suggest.dag import Unit, results
from npudsl.suggest.hoist import Hoist
from npudsl.suggest.simulate import predict
from npudsl.suggest.units import Site, attribute_of
from npudsl.timeline.simulate import Schedule

__all__ = ["SYNC_COST", "Move", "Plan", "Search", "choose", "sites_of", "stream_name"]

SYNC_COST = 0.001  # microseconds per event record + wait pair end, see docs/suggest.md ("The cost model")
_TIE = 1e-9  # microseconds: a statement moves only for a real gain, not for rounding


@attrs.frozen(kw_only=True)
class Move:
    site: Site
    stream: str
    units: tuple[Unit, ...]
    gain: float  # microseconds the move took off the makespan when it was chosen
    hoist: Hoist | None = None  # its statement moved up first


@attrs.frozen(kw_only=True)
class Plan:
    moves: tuple[Move, ...]
    schedule: Schedule  # predicted, with the moves
    before: Schedule  # everything on the main stream
    sync_cost: float
    search: Search | None = attrs.field(default=None, eq=False, repr=False)  # its final state, for --explain
    streams: int = 1

    @property
    def syncs(self) -> int:
        return sum(2 * len(move.units) for move in self.moves)


def stream_name(site: Site, module: str) -> str:
    """A name like a hand-written one: the method, or the submodule's attribute (its class for a list item)."""
    attribute = attribute_of(site, module)
    if attribute is not None:
        return attribute.lstrip("_") or attribute
    return "".join("_" + c.lower() if c.isupper() else c for c in site.callee.split(".")[0]).lstrip("_")


def sites_of(units: list[Unit]) -> dict[Site, tuple[Unit, ...]]:
    by_site: dict[Site, list[Unit]] = {}
    for unit in units:
        by_site.setdefault(unit.instance.site, []).append(unit)
    return {site: tuple(found) for site, found in by_site.items() if all(u.movable for u in found)}


def _overlaps(a: tuple[Unit, ...], b: tuple[Unit, ...]) -> bool:
    spans = [(u.instance.nodes[0], u.instance.nodes[-1]) for u in b]
    return any(s <= u.instance.nodes[-1] and u.instance.nodes[0] <= e for u in a for s, e in spans)


def _reads(a: tuple[Unit, ...], b: tuple[Unit, ...], nodes: list[torch.fx.Node]) -> bool:
    """Whether a call of ``a`` reads a result of a call of ``b``."""
    mine = {nodes[i] for u in a for i in u.instance.nodes}
    return any(user in mine for u in b for node in results(u.instance, nodes) for user in node.users)


_Try = tuple[Site, str, tuple[Unit, ...], "Hoist | None"]


@attrs.define
class Search:
    """The greedy search's state: the moves chosen so far, and what another move would gain."""

    nodes: list[torch.fx.Node]
    cost: Callable[[torch.fx.Node], float]
    sync_cost: float
    hoists: dict[Site, tuple[Hoist, ...]]
    moves: list[Move] = attrs.Factory(list)

    def makespan(self, extra: _Try | None = None) -> float:
        tried = [(m.site, m.stream, m.units, m.hoist) for m in self.moves] + ([extra] if extra else [])
        return predict(self.nodes, self.cost, *_placement(tried)).makespan

    def blocked(self, units: tuple[Unit, ...]) -> str | None:
        """Why no call of ``units`` may join the moves chosen so far (None: it may)."""
        for m in self.moves:
            if _overlaps(units, m.units):
                return f"it is inside, or holds, {m.site.callee}, already on stream {m.stream!r} (streams do not nest)"
            if _reads(units, m.units, self.nodes) or _reads(m.units, units, self.nodes):
                return f"it and {m.site.callee} (on stream {m.stream!r}) read one another's results"
        return None

    def tries(self, site: Site, units: tuple[Unit, ...], streams: int, now: float) -> list[Move]:
        """Every way to move ``site``: each stream in use and a new one, each place its statement may move up to."""
        used = list(dict.fromkeys(m.stream for m in self.moves))
        fresh = stream_name(site, units[0].instance.module)
        return [
            Move(
                site=site,
                stream=stream,
                units=units,
                hoist=hoist,
                gain=now - self.makespan((site, stream, units, hoist)),
            )
            for stream in used + ([_unique(fresh, used)] if len(used) < streams else [])
            for hoist in (None, *self.hoists.get(site, ()))
        ]  # nearest first: the smallest change wins ties

    def best(self, sites: dict[Site, tuple[Unit, ...]], streams: int) -> Move | None:
        now, found = self.makespan(), None
        for site, units in sites.items():
            if self.blocked(units) is not None:
                continue
            for move in self.tries(site, units, streams, now):
                margin = _TIE if move.hoist else 0.0
                if move.gain > 2 * len(units) * self.sync_cost and (found is None or move.gain > found.gain + margin):
                    found = move
        return found


def _placement(
    tried: list[_Try], label: Callable[[Site, str], str] = lambda site, stream: stream
) -> tuple[dict[Unit, tuple[str, str]], dict[Unit, tuple[int, int]]]:
    """The units' streams and labels, and where the moved-up ones are issued."""
    moves = {u: (stream, label(site, stream)) for site, stream, units, _ in tried for u in units}
    early = {u: (fork, hoist.before) for _, _, units, hoist in tried if hoist for u, fork in zip(units, hoist.forks)}
    return moves, early


def _unique(name: str, used: list[str]) -> str:
    taken = set(used) | {"default"}
    return (
        name
        if name not in taken
        else next(f"{name}_{k}" for k in range(2, len(taken) + 3) if f"{name}_{k}" not in taken)
    )


def choose(
    units: list[Unit],
    nodes: list[torch.fx.Node],
    cost: Callable[[torch.fx.Node], float],
    *,
    streams: int = 1,
    sync_cost: float = SYNC_COST,
    hoists: Callable[[dict[Site, tuple[Unit, ...]]], dict[Site, tuple[Hoist, ...]]] | None = None,
) -> Plan:
    """The moves worth their syncs, best first, and the predicted timeline with them; ``hoists`` gives, for the
    movable sites, the places each statement may move up to (see :func:`npudsl.suggest.hoist.options`)."""
    sites = sites_of(units)
    search = Search(nodes=nodes, cost=cost, sync_cost=sync_cost, hoists=hoists(sites) if hoists else {})
    while (move := search.best(sites, streams)) is not None:
        search.moves.append(move)
    tried = [(m.site, m.stream, m.units, m.hoist) for m in search.moves]
    return Plan(
        moves=tuple(search.moves),
        schedule=predict(nodes, cost, *_placement(tried, _label)),
        before=predict(nodes, cost, {}),
        sync_cost=sync_cost,
        search=search,
        streams=streams,
    )


def _label(site: Site, stream: str) -> str:
    return site.callee
