"""Stage 2b: where a call could start earlier, its statement moved up in its block, when the data allows it.

With automatic sync a side stream waits, at the call, for everything the main
stream issued before it; a call made late overlaps nothing before it. Moving
its statement up, past statements it does not depend on, starts it earlier;
its join stays where it was. The source says which statements it may pass by
name (:mod:`npudsl.suggest.blocks`); the graph says how far, per call instance.
Walking back from the call's first op, every op is owned by one of the passed
statements (the same caller frame, a line of that statement), until an op of
an earlier statement. A statement is passed only when

- its ops and the call's do not depend on each other, by value or through
  memory (:func:`~npudsl.suggest.effects.conflict`);
- none of them draws random numbers (nor may the call itself), and it holds no
  collective when the call does;
- each was traced through methods of the model's file only, whose code does
  nothing the graph cannot see; a statement without ops only binds local names.

The call's statement must hold the call and nothing else, and the call must not
write in place memory it did not make (another stream may be reading it then).
"""

from __future__ import annotations

import attrs
import torch.fx

from npudsl.race._timeline import runtime_op
from npudsl.suggest.blocks import Above, Source, Statement
from npudsl.suggest.dag import Unit
from npudsl.suggest.effects import collective, dependence, foreign_writes, opaque, random
from npudsl.suggest.units import Site, SourceDefs, frames_of, traced_methods

__all__ = ["Hoist", "options"]

_COMPUTE = ("call_function", "call_method", "call_module")


@attrs.frozen(kw_only=True)
class Hoist:
    """Move the statement of ``site`` (first line ``line``) up, in front of the statement at line ``before``."""

    site: Site
    line: int
    before: int
    after: int | None  # last line of the statement it then follows; None: it opens its block
    code: str  # the moved statement
    forks: tuple[int, ...]  # per call of the site, in order: the op it is then issued before


@attrs.define(eq=False)
class _Graph:
    nodes: list[torch.fx.Node]
    defs: SourceDefs
    source: Source
    _frames: dict[int, list[tuple[int, str]]] = attrs.Factory(dict)

    def frames(self, i: int) -> list[tuple[int, str]]:
        if i not in self._frames:
            self._frames[i] = frames_of(self.nodes[i], self.defs)
        return self._frames[i]

    def line(self, i: int, unit: Unit) -> int | None:
        """The caller line op ``i`` was made on, when it ran in the same call of ``unit``'s caller."""
        depth, mine, frames = unit.instance.depth, self.frames(unit.fork), self.frames(i)
        same = len(frames) > depth and frames[:depth] == mine[:depth] and frames[depth][1] == mine[depth][1]
        return frames[depth][0] if same else None

    def clean(self, ops: list[int], depth: int) -> bool:
        """Every op was traced through the model's own methods, which do nothing the graph cannot see."""
        for i in ops:
            methods = traced_methods(self.nodes[i], self.defs)
            if methods is None or not all(self.source.visible(m) for m in methods[depth + 1 :]):
                return False
        return True


def _owned(unit: Unit, above: Above, graph: _Graph) -> tuple[dict[int, list[int]], int]:
    """The ops of each passed statement (by its place in ``above.passable``), and how many statements are known."""
    low = unit.parent.nodes[0] if unit.parent is not None else 0
    owned: dict[int, list[int]] = {}
    for i in range(unit.fork - 1, low - 1, -1):
        node = graph.nodes[i]
        if node.op not in _COMPUTE:
            continue
        line = graph.line(i, unit) if runtime_op(node) is None else None
        k = next((k for k, s in enumerate(above.passable) if s.first <= line <= s.last), None) if line else None
        if k is None:
            earlier = line is not None and line < above.passable[-1].first
            return owned, len(above.passable) if earlier else max(owned, default=-1) + 1
        owned.setdefault(k, []).append(i)
    return owned, len(above.passable)


def _alone(unit: Unit, moved: Statement, graph: _Graph) -> str | None:
    """Why the call cannot start anywhere earlier (``None``: it may): its statement holds more, or its ops do."""
    first, last = unit.instance.nodes[0], unit.instance.nodes[-1]
    inside = set(unit.instance.nodes)
    span = [i for i in range(first, last + 1) if graph.nodes[i].op in _COMPUTE]
    before = next((i for i in range(first - 1, -1, -1) if graph.nodes[i].op in _COMPUTE), None)
    after = next((i for i in range(last + 1, len(graph.nodes)) if graph.nodes[i].op in _COMPUTE), None)
    outside = [i for i in (before, after) if i is not None]
    ops = [graph.nodes[i] for i in unit.instance.nodes]
    if not set(span) <= inside or any(moved.first <= (graph.line(i, unit) or 0) <= moved.last for i in outside):
        return "its statement does more than the call"
    if not graph.clean(list(unit.instance.nodes), unit.instance.depth):
        return "the call runs code whose effects the graph cannot see"
    if any(map(random, ops)):
        return "the call draws random numbers"
    return "the call writes in place memory it did not make" if foreign_writes(ops) else None


def _passes(unit: Unit, ops: list[int], graph: _Graph) -> str | None:
    """Why the call may not pass the statement owning ``ops`` (``None``: it may)."""
    mine = [graph.nodes[i] for i in unit.instance.nodes]
    theirs = [graph.nodes[i] for i in ops]
    if any(map(random, theirs)):
        return "draws random numbers (moving the call would change which numbers each draw gets)"
    if any(map(opaque, theirs)) or any(map(opaque, mine)):
        return "changes state outside tensors (global torch state such as the default dtype), or the call does"
    if any(map(collective, mine)) and any(map(collective, theirs)):
        return "issues a collective, as the call does"
    if not graph.clean(ops, unit.instance.depth):
        return "runs code whose effects the graph cannot see"
    return dependence(mine, theirs)


def _reach(unit: Unit, above: Above, graph: _Graph) -> tuple[list[int | None], str | None]:
    """For each number of statements passed (1, 2...): the op the call is then issued before (None: no op
    passed); and why it stops where it does when a statement (not the block's top) stops it."""
    if unit.instance.depth and unit.parent is None:
        return [], None
    if (why := _alone(unit, above.moved, graph)) is not None or not above.passable:
        return [], why or above.stop
    owned, known = _owned(unit, above, graph)
    forks: list[int | None] = []
    fork = None
    for k, statement in enumerate(above.passable[:known]):
        ops = owned.get(k, [])
        why = (
            _passes(unit, ops, graph)
            if ops
            else None
            if statement.facts.pure
            else (
                "runs no op of the graph, yet is more than a binding: an effect the graph cannot see (global state...)"
            )
        )
        if why is not None:
            return forks, f"line {statement.first} {why}"
        fork = min(ops) if ops else fork
        forks.append(fork)
    return forks, above.stop if known == len(above.passable) else None


def options(
    sites: dict[Site, tuple[Unit, ...]],
    nodes: list[torch.fx.Node],
    defs: SourceDefs,
    source: Source,
    declined: list[str] | None = None,
) -> dict[Site, tuple[Hoist, ...]]:
    """For each site, the places its statement may move up to that start some call earlier, nearest first.

    ``declined`` (when given) gets a line per site whose statement stops short for a reason worth telling:
    what the statement it may not pass does (a write, random numbers, an effect the graph cannot see).
    """
    graph = _Graph(nodes=nodes, defs=defs, source=source)
    found: dict[Site, tuple[Hoist, ...]] = {}
    for site, units in sites.items():
        above = source.above(site.caller, site.line)
        if above is None or not above.passable and above.stop is None:
            continue
        reaches, whys = zip(*(_reach(unit, above, graph) for unit in units))
        if declined is not None:
            declined += [
                f"{site.callee} (line {site.line}) not moved above: {why}" for why in dict.fromkeys(whys) if why
            ]
        hoists: dict[tuple[int, ...], Hoist] = {}
        for k in range(min(map(len, reaches))):
            forks = tuple(fork if (fork := reach[k]) is not None else u.fork for reach, u in zip(reaches, units))
            if forks != tuple(u.fork for u in units) and forks not in hoists:
                hoists[forks] = Hoist(
                    site=site,
                    line=above.moved.first,
                    before=above.passable[k].first,
                    after=above.after(k + 1),
                    code=above.moved.code,
                    forks=forks,
                )
        if hoists:
            found[site] = tuple(hoists.values())
    return found
