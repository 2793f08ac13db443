"""An input the caller made, kept alive for a side stream where the caller's stream first allocates, not at the fork.

``record_stream(x, side)`` is needed only when the caller's stream may hand ``x``'s memory to a new tensor while
the side stream still reads it: after ``x``'s last use on the caller's stream, before the join. The keep decided
at the fork (``keep_alive.py``) covers every path; on a path that joins before the caller's stream allocates
(vllm-ascend's dense first layer, whose shared expert is joined right away), it is one call too many. So, once
the wraps are final (after ``one_block``), each keep of a name the caller made walks the paths from the call to
its join (the call's own, or that of a later call on its stream that covers it, ``relations.covers``) and moves
to just before the first statement that may allocate on the caller's stream on each path that has one (a split
statement whose first operand runs before the wait included), under the covering call's guard; where no path
has one, it goes. Statements wrapped on a stream whose guard holds wherever the call forked run no op on the
caller's stream.

The keep stays at the fork where the walk cannot follow a path (a loop, ``with`` or ``try``, the function's end
without a join, a rebinding of the name), where the first statement after the call allocates, or where another
call on the stream reads the name (its own keep may have been left to this one).
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.aliasing import aliasing
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names, data_reads, leaves, runs_op
from codegen.lower.flow.keep_alive import split_of
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import COMPOUND
from codegen.lower.flow.transfer import Join
from codegen.lower.plan import Anchor, Cond, KeepAlive, Step, Value, Wrap

__all__ = ["late_keeps"]

Steps = dict[Anchor, list[Step]]
_Place = tuple[ast.stmt, Cond | None]  # before this statement, under this condition


def late_keeps(wraps: dict[ast.stmt, Wrap], facts: CallerFacts, steps: Steps, applied: dict[ast.stmt, str]) -> None:
    """Each call's keeps of names its caller made moved to where the caller's stream first allocates before the
    join (``wraps`` and ``steps`` changed in place; ``applied``: the split statements)."""
    for site in facts.sites:
        keep, where = _keep_of(site, wraps, steps)
        if keep is None or site.stmt in facts.looped or facts.syncs[site.index].flag:
            continue
        stay: list[Value] = []
        for value in keep.values:
            places = _places(facts, site, value.name, wraps, applied) if _movable(facts, site, value) else None
            if places is None:
                stay.append(value)
                continue
            for stmt, when in places:
                moved = KeepAlive(stream=site.tag, when=when, values=(value,))
                steps.setdefault(("before", stmt, ""), []).insert(0, moved)
        _replace(site, keep, tuple(stay), where, wraps, steps)


def _keep_of(site: Site, wraps: dict[ast.stmt, Wrap], steps: Steps) -> tuple[KeepAlive | None, str]:
    """The call's keep for its stream: first in its ``with`` (``"wrap"``), or before it once ``one_block`` took
    its ``with`` into the next call's (``"steps"``)."""
    wrap = wraps.get(site.stmt)
    found = list(wrap.enter) if wrap is not None else steps.get(("before", site.stmt, ""), [])
    keeps = [s for s in found if isinstance(s, KeepAlive) and s.stream == site.tag and s.values]
    return (keeps[0], "wrap" if wrap is not None else "steps") if len(keeps) == 1 else (None, "")


def _replace(
    site: Site, keep: KeepAlive, stay: tuple[Value, ...], where: str, wraps: dict[ast.stmt, Wrap], steps: Steps
) -> None:
    if stay == keep.values:
        return
    kept = [attrs.evolve(keep, values=stay)] if stay else []
    if where == "wrap":
        wrap = wraps[site.stmt]
        enter = [new for s in wrap.enter for new in (kept if s is keep else [s])]
        wraps[site.stmt] = attrs.evolve(wrap, enter=tuple(enter))
    else:
        anchor = ("before", site.stmt, "")
        steps[anchor] = [new for s in steps[anchor] for new in (kept if s is keep else [s])]


def _movable(facts: CallerFacts, site: Site, value: Value) -> bool:
    """A plain name the caller made (no call's result, no computed argument, no split's view), read by no other
    call on the stream."""
    name = value.name
    made_by_calls = {n for other in facts.sites for n in bound_names(other.stmt)}
    hoisted = {n for _, n in facts.syncs[site.index].hoisted}
    others = [o for o in facts.sites if o is not site and o.tag == site.tag]
    return (
        name.isidentifier()
        and name != facts.receiver
        and name not in made_by_calls | hoisted
        and split_of(facts, site.stmt, name) is None
        and not any(name in data_reads(o.stmt) for o in others)
    )


def _places(
    facts: CallerFacts, site: Site, name: str, wraps: dict[ast.stmt, Wrap], applied: dict[ast.stmt, str]
) -> list[_Place] | None:
    """Where the keep goes (None: it stays at the fork)."""
    walk = _Walk(facts=facts, site=site, name=name, wraps=wraps, applied=applied)
    block = facts.block(site.stmt)
    found = walk.from_(block, block.index(site.stmt) + 1, frozenset({site.index}))
    if found is None or (len(found) == 1 and found[0][0] is walk.first()):
        return None
    unique = {id(stmt): (stmt, when) for stmt, when in found}
    return list(unique.values())


@attrs.frozen(kw_only=True)
class _Walk:
    """The paths from the call to its join, each up to its first statement that may allocate on the caller's
    stream."""

    facts: CallerFacts
    site: Site
    name: str
    wraps: dict[ast.stmt, Wrap]
    applied: dict[ast.stmt, str]

    def first(self) -> ast.stmt | None:
        """The statement that runs right after the call."""
        block = self.facts.block(self.site.stmt)
        at = block.index(self.site.stmt) + 1
        return block[at] if at < len(block) else self._after(block)

    def _after(self, block: list[ast.stmt]) -> ast.stmt | None:
        owner = self.facts.owner(block[0])
        if not isinstance(owner, ast.If):
            return None
        outer = self.facts.block(owner)
        at = outer.index(owner) + 1
        return outer[at] if at < len(outer) else self._after(outer)

    def from_(self, block: list[ast.stmt], at: int, covering: frozenset[int]) -> list[_Place] | None:
        """The places on the paths from ``block[at]`` on (``covering``: the calls whose join joins the call)."""
        for index in range(at, len(block)):
            stmt = block[index]
            verdict = self._verdict(stmt, covering)
            if verdict == "joined":
                return []
            if verdict == "place":
                return self._placed(stmt, covering)
            if verdict == "fail":
                return None
            if verdict == "if":
                assert isinstance(stmt, ast.If)
                return self._branches(stmt, block, index, covering)
            covering |= self._covering_at(stmt)
        return self._leave(block, covering)

    def _branches(self, stmt: ast.If, block: list[ast.stmt], at: int, covering: frozenset[int]) -> list[_Place] | None:
        body = self.from_(stmt.body, 0, covering)
        rest = self.from_(stmt.orelse, 0, covering) if stmt.orelse else self.from_(block, at + 1, covering)
        return None if body is None or rest is None else [*body, *rest]

    def _leave(self, block: list[ast.stmt], covering: frozenset[int]) -> list[_Place] | None:
        """Past the end of ``block``: after its ``if`` (the function's end, or any other block's: not followed)."""
        owner = self.facts.owner(block[0]) if block else None
        if not isinstance(owner, ast.If):
            return None
        outer = self.facts.block(owner)
        return self.from_(outer, outer.index(owner) + 1, covering)

    def _verdict(self, stmt: ast.stmt, covering: frozenset[int]) -> str:
        if covering & _joined_before(self.facts, stmt):
            return "place" if stmt in self.applied else "joined"  # a split's first operand runs before the wait
        if stmt in self.wraps:
            aside = self._aside(self.wraps[stmt]) and not self._hoists(stmt) and self.name not in bound_names(stmt)
            return "pass" if aside else "fail"
        if isinstance(stmt, ast.If):
            return "place" if runs_op(stmt.test) else "if"
        if isinstance(stmt, COMPOUND) or leaves(stmt) or (runs_op(stmt) and aliasing(stmt) is None):
            return "place"
        return "fail" if self.name in bound_names(stmt) or isinstance(stmt, ast.Delete) else "pass"

    def _aside(self, wrap: Wrap) -> bool:
        """The wrapped statement runs on its stream wherever the call forked (its guard is that of the call or
        of a call that forks wherever it did)."""
        return wrap.switch.when is None or wrap.switch.when in self._guards()

    def _hoists(self, stmt: ast.stmt) -> bool:
        """A call whose computed arguments the caller's stream binds first (``_before`` in ``wraps.py``)."""
        return any(o.stmt is stmt and self.facts.syncs[o.index].hoisted for o in self.facts.sites)

    def _guards(self) -> list[Cond]:
        covering = [o for o in self.facts.sites if o is self.site or self._covers(o)]
        return [g for o in covering if (g := _guard(self.facts, o)) is not None]

    def _covers(self, other: Site) -> bool:
        return other.tag == self.site.tag and self.facts.relations.covers(self.site.index, other.index)

    def _covering_at(self, stmt: ast.stmt) -> frozenset[int]:
        return frozenset(o.index for o in self.facts.sites if o.stmt is stmt and self._covers(o))

    def _placed(self, stmt: ast.stmt, covering: frozenset[int]) -> list[_Place] | None:
        """The keep before ``stmt``, under the guard of the call or of one covering it; none known: only in the
        call's own block, which runs on wherever the call ran."""
        guards = [g for i in sorted(covering) if (g := _guard(self.facts, self.facts.sites[i])) is not None]
        if guards:
            return [(stmt, guards[0])]
        return [(stmt, None)] if stmt in self.facts.block(self.site.stmt) else None


def _guard(facts: CallerFacts, site: Site) -> Cond | None:
    sync = facts.syncs[site.index]
    return None if sync.flag else Cond.of(sync.guard_text)


def _joined_before(facts: CallerFacts, stmt: ast.stmt) -> set[int]:
    found = facts.result.steps.get(("before", stmt, ""), ())
    return {s.site for s in found if isinstance(s, Join)}
