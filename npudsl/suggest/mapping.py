"""From a plan's moves to source edits: decorate the callee where every call moves alike, else wrap each call;
move up the statements the plan moved."""

from __future__ import annotations

import attrs
import libcst as cst

from npudsl.suggest.apply import Edit, Wrap, self_calls, wrappable
from npudsl.suggest.dag import Unit
from npudsl.suggest.plan import Move
from npudsl.suggest.split import fresh_name
from npudsl.suggest.units import Site, SourceDefs, attribute_of

__all__ = ["edits", "mappable"]


def _sites_of(units: list[Unit]) -> dict[str, set[Site]]:
    found: dict[str, set[Site]] = {}
    for unit in units:
        found.setdefault(unit.instance.site.callee, set()).add(unit.instance.site)
    return found


def mappable(units: list[Unit], module: cst.Module) -> list[Unit]:
    """``units``, with those whose site cannot be written as a decorator marked unmovable."""
    sites = _sites_of(units)
    out, calls = [], None
    for unit in units:
        site = unit.instance.site
        attribute = attribute_of(site, unit.instance.module)
        if len(sites[site.callee]) == 1:
            out.append(unit)
            continue
        calls = self_calls(module) if calls is None else calls
        if attribute is None or not wrappable(calls, site, attribute):
            unit = attrs.evolve(unit, problem="its call is not `self.<name>(...)`, which a wrapper could take over")
        out.append(unit)
    return out


def edits(moves: tuple[Move, ...], units: list[Unit], defs: SourceDefs) -> Edit:
    """Where each move's decorator goes (see :mod:`npudsl.suggest.apply`)."""
    sites = _sites_of(units)
    taken = {name.split(".")[-1] for _, _, name in defs.spans}
    decorate: dict[str, str] = {}
    wraps: list[Wrap] = []
    for callee in dict.fromkeys(move.site.callee for move in moves):
        mine = [move for move in moves if move.site.callee == callee]
        if {move.site for move in mine} == sites[callee] and len({move.stream for move in mine}) == 1:
            decorate[callee.split(".")[0] if mine[0].site.submodule else callee] = mine[0].stream
            continue
        for move in mine:
            attribute = attribute_of(move.site, move.units[0].instance.module)
            assert attribute is not None
            wraps.append(
                Wrap(site=move.site, attribute=attribute, name=fresh_name(f"_{attribute}", taken), stream=move.stream)
            )
    return Edit(decorate=decorate, wraps=tuple(wraps), hoists=tuple(m.hoist for m in moves if m.hoist))
