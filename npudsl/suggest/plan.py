"""Stage 3: choose which call sites go to which side stream, by the time they take off the critical path.

A decorator moves every call a site makes, so the choice is per :class:`Site`.
The search is a greedy list schedule on at most ``streams`` side streams: each
round predicts the timeline (:func:`~npudsl.suggest.simulate.predict`) for every
site not yet placed, on every stream in use and on one new stream, and keeps the
move that shortens the critical path (the predicted makespan) most; it stops when
no move saves more than the synchronization it adds: two syncs per call (the
fork and the join), each priced at ``sync_cost`` microseconds. Sites nested in,
or holding, a placed site are not placed (streams do not nest).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import torch.fx

from npudsl.suggest.dag import Unit
from npudsl.suggest.simulate import predict
from npudsl.suggest.units import Site, attribute_of
from npudsl.timeline.simulate import Schedule

__all__ = ["SYNC_COST", "Move", "Plan", "choose", "stream_name"]

SYNC_COST = 0.001  # microseconds per event record + wait pair end, see docs/suggest.md ("The cost model")


@attrs.frozen(kw_only=True)
class Move:
    site: Site
    stream: str
    units: tuple[Unit, ...]
    gain: float  # microseconds the move took off the makespan when it was chosen


@attrs.frozen(kw_only=True)
class Plan:
    moves: tuple[Move, ...]
    schedule: Schedule  # predicted, with the moves
    before: Schedule  # everything on the main stream
    sync_cost: float

    @property
    def syncs(self) -> int:
        return sum(2 * len(move.units) for move in self.moves)


def stream_name(site: Site, module: str) -> str:
    """A name like a hand-written one: the method, or the submodule's attribute (its class for a list item)."""
    attribute = attribute_of(site, module)
    if attribute is not None:
        return attribute.lstrip("_") or attribute
    return "".join("_" + c.lower() if c.isupper() else c for c in site.callee.split(".")[0]).lstrip("_")


def _sites(units: list[Unit]) -> dict[Site, tuple[Unit, ...]]:
    by_site: dict[Site, list[Unit]] = {}
    for unit in units:
        by_site.setdefault(unit.instance.site, []).append(unit)
    return {site: tuple(found) for site, found in by_site.items() if all(u.movable for u in found)}


def _overlaps(a: tuple[Unit, ...], b: tuple[Unit, ...]) -> bool:
    spans = [(u.instance.nodes[0], u.instance.nodes[-1]) for u in b]
    return any(s <= u.instance.nodes[-1] and u.instance.nodes[0] <= e for u in a for s, e in spans)


@attrs.define
class _Search:
    nodes: list[torch.fx.Node]
    cost: Callable[[torch.fx.Node], float]
    sync_cost: float
    moves: list[Move] = attrs.Factory(list)

    def placement(self, extra: tuple[Site, str, tuple[Unit, ...]] | None = None) -> dict[Unit, tuple[str, str]]:
        moves = [(m.site, m.stream, m.units) for m in self.moves] + ([extra] if extra else [])
        return {u: (stream, stream) for _, stream, units in moves for u in units}

    def makespan(self, extra: tuple[Site, str, tuple[Unit, ...]] | None = None) -> float:
        return predict(self.nodes, self.cost, self.placement(extra)).makespan

    def best(self, sites: dict[Site, tuple[Unit, ...]], streams: int) -> Move | None:
        now, found = self.makespan(), None
        used = list(dict.fromkeys(m.stream for m in self.moves))
        for site, units in sites.items():
            if any(_overlaps(units, m.units) for m in self.moves):
                continue
            fresh = stream_name(site, units[0].instance.module)
            for stream in used + ([_unique(fresh, used)] if len(used) < streams else []):
                gain = now - self.makespan((site, stream, units))
                if gain > 2 * len(units) * self.sync_cost and (found is None or gain > found.gain):
                    found = Move(site=site, stream=stream, units=units, gain=gain)
        return found


def _unique(name: str, used: list[str]) -> str:
    taken = set(used) | {"default"}
    return name if name not in taken else next(f"{name}_{k}" for k in range(2, len(taken) + 3)
                                               if f"{name}_{k}" not in taken)


def choose(units: list[Unit], nodes: list[torch.fx.Node], cost: Callable[[torch.fx.Node], float], *,
           streams: int = 1, sync_cost: float = SYNC_COST) -> Plan:
    """The moves worth their syncs, best first, and the predicted timeline with them."""
    search = _Search(nodes=nodes, cost=cost, sync_cost=sync_cost)
    sites = _sites(units)
    while (move := search.best(sites, streams)) is not None:
        search.moves.append(move)
    labels = {u: (m.stream, _label(m.site)) for m in search.moves for u in m.units}
    return Plan(moves=tuple(search.moves), schedule=predict(nodes, cost, labels),
                before=predict(nodes, cost, {}), sync_cost=sync_cost)


def _label(site: Site) -> str:
    return site.callee
