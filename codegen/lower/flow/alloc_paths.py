"""The paths from a call to its join, each followed to its first statement that may allocate on the caller's stream.

``late_keeps.py`` places a keep right before each such statement. A path ends at a join of the call, or of a later call
on its stream that covers it (``relations.covers``: it forks wherever the call did, so its join orders the call's work
too), counted only once the path went past that call. A statement may allocate when it runs an op that is not a view nor
a lookup in a mapping by a string (``op_free.py``), leaves (a ``return`` or jump without the join), is a loop, ``with``
or ``try``, or is an ``if`` whose test may compute (``quiet_tests.compares_only``: a test that only compares and
combines names, attributes and constants, ``if self.compress_ratio == 4:``, allocates nothing in a captured graph, where
a tensor compared would be a branch on data that one graph cannot hold; and eagerly the frame holds the name). An ``if``
whose test runs none is followed into both branches and past its end. A statement wrapped on a stream whose guard holds
wherever the call forked runs nothing on the caller's stream, unless the caller binds a computed argument for it first.
A call whose fork is read into a flag (it forks under an ``if``: cann_v4_compressor's compressor) places its keeps under
that flag where the caller clears it as it starts and the call is in no loop. The walk gives up (None) where it cannot
follow a path: the function's end, or a loop's, ``with``'s or ``try``'s block's, without the join; a statement that
rebinds the name (a keep after it would keep another tensor); a place outside the call's block with no guard to spell.
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.caller_facts import CallerFacts, any_may
from codegen.lower.flow.exprs import bound_names, leaves, runs_op
from codegen.lower.flow.ge_before import works
from codegen.lower.flow.op_free import appears_only
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import COMPOUND
from codegen.lower.flow.transfer import Join
from codegen.lower.plan import Cond, Wrap

__all__ = ["Place", "first_allocations"]

Place = tuple[ast.stmt, Cond | None]  # before this statement, under this condition


def first_allocations(
    facts: CallerFacts, site: Site, name: str, wraps: dict[ast.stmt, Wrap], applied: dict[ast.stmt, str]
) -> list[Place] | None:
    """Where a keep of ``name`` for ``site``'s stream goes: before the first statement that may allocate on each
    path that has one (None: it stays at the fork; so where the statement right after the call allocates)."""
    walk = _Walk(facts=facts, site=site, name=name, wraps=wraps, applied=applied)
    block = facts.block(site.stmt)
    found = walk.walk_from(block, block.index(site.stmt) + 1, frozenset({site.index}))
    if found is None or (len(found) == 1 and found[0][0] is walk.first()):
        return None
    unique = {id(stmt): (stmt, when) for stmt, when in found}
    places = list(unique.values())
    return None if _one_path_meets_two(facts, [stmt for stmt, _ in places]) else places


def _one_path_meets_two(facts: CallerFacts, stmts: list[ast.stmt]) -> bool:
    """Some path runs two of ``stmts``: one stands after a compound statement holding another (a keep under ``if a:``
    and one after that ``if``): the keep there would run twice, so it stays at the fork."""
    for first in stmts:
        chain: list[ast.stmt] = []
        at: ast.stmt | None = first
        while at is not None:
            chain.append(at)
            at = facts.owner(at)
        for later in stmts:
            block = facts.block(later)
            if later is not first and any(a in block and block.index(a) < block.index(later) for a in chain):
                return True
    return False


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

    def walk_from(self, block: list[ast.stmt], at: int, covering: frozenset[int]) -> list[Place] | None:
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

    def _branches(self, stmt: ast.If, block: list[ast.stmt], at: int, covering: frozenset[int]) -> list[Place] | None:
        body = self.walk_from(stmt.body, 0, covering)
        rest = self.walk_from(stmt.orelse, 0, covering) if stmt.orelse else self.walk_from(block, at + 1, covering)
        return None if body is None or rest is None else [*body, *rest]

    def _leave(self, block: list[ast.stmt], covering: frozenset[int]) -> list[Place] | None:
        """Past the end of ``block``: after its ``if`` (the function's end, or any other block's: not followed)."""
        owner = self.facts.owner(block[0]) if block else None
        if not isinstance(owner, ast.If):
            return None
        outer = self.facts.block(owner)
        return self.walk_from(outer, outer.index(owner) + 1, covering)

    def _verdict(self, stmt: ast.stmt, covering: frozenset[int]) -> str:
        if covering & _joined_before(self.facts, stmt):
            return "place" if stmt in self.applied else "joined"  # a split's first operand runs before the wait
        if stmt in self.wraps:
            aside = self._aside(self.wraps[stmt]) and not self._hoists(stmt) and self.name not in bound_names(stmt)
            return "pass" if aside else "fail"
        if isinstance(stmt, ast.If):
            return "place" if works(stmt.test) else "if"
        if isinstance(stmt, COMPOUND) or leaves(stmt) or (runs_op(stmt) and not appears_only(stmt)):
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

    def _placed(self, stmt: ast.stmt, covering: frozenset[int]) -> list[Place] | None:
        """The keep before ``stmt``, under the guard of the call or of one covering it; none known: only in the
        call's own block, which runs on wherever the call ran."""
        guards = [g for i in sorted(covering) if (g := _guard(self.facts, self.facts.sites[i])) is not None]
        if guards:
            return [(stmt, guards[0])]
        return [(stmt, None)] if stmt in self.facts.block(self.site.stmt) else None


def _guard(facts: CallerFacts, site: Site) -> Cond | None:
    """The call's guard, or its flag where the caller clears the flag as it starts (``flagged``)."""
    sync = facts.syncs[site.index]
    if sync.flag:
        return Cond.of(sync.flag) if flagged(facts, site) else None
    return Cond.of(sync.guard_text)


def flagged(facts: CallerFacts, site: Site) -> bool:
    """The call's flag says whether it forked wherever its join may be read: the caller clears it as it starts
    (a may-join reads it), and the call is in no loop (the flag of an earlier iteration)."""
    return bool(facts.syncs[site.index].flag) and any_may(facts.result, site.index) and site.stmt not in facts.looped


def _joined_before(facts: CallerFacts, stmt: ast.stmt) -> set[int]:
    found = facts.result.steps.get(("before", stmt, ""), ())
    return {s.site for s in found if isinstance(s, Join)}
