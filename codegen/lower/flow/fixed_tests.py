"""Tests a caller reads one value at every ``if``: what a path knows from the tests it passed, and where a test
may be read again.

vllm-ascend's context-parallel attention binds ``has_chunked_context = meta.chunked_context is not None``, forks
its query gather under ``if has_chunked_context:``, and reads the result under a later ``if has_chunked_context:``
(the join). Both tests read one value, so no path through the later test's ``else`` has the gather pending; the
merge of paths alone cannot know that, and kept the gather pending on the path where the first test held and the
second did not (a path no run takes), so the function waited for it again before it returned: one wait per call
and layer that nothing needed. Here a call forked only where ``if x:`` held is left out of the state on the paths
of a later ``if x:`` where ``x`` is false (and the other way round for ``if not x:`` and ``else``).

The other way round too: omni-infer's MoE joins its shared expert under ``if next_attention_weights is not None
and next_attention_weights["q_a_proj_weight"] is not None:`` (the prefetches read its result) and needs it again
at the return. Entering a branch, every pending call learns the branch's facts, and where paths meet a call keeps
the facts true on every path where it is still pending (``state.Pending.where``): here, that the test was false.
A later ``if`` contradicting them has it joined already; a join placed later waits only where they hold, the test
read again (``if ... and (next_attention_weights is None or next_attention_weights['q_a_proj_weight'] is None):``),
as an engineer writes it by hand. A test is read again only where it ran on every path before (``known_at``:
an ``if`` earlier in an enclosing block), so it raises nothing it did not raise then.

Which tests qualify, and how two spellings of one test are one fact: ``fixed_values.py``, ``if_facts.py``.
"""

from __future__ import annotations

import ast

import attrs

from codegen.index.walked import per_node
from codegen.lower.flow.fixed_values import FixedValues, fixed_values
from codegen.lower.flow.if_facts import Fact, fact_of
from codegen.lower.flow.state import Pending, State, joined

__all__ = ["FixedTests", "fixed_tests"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Anchor = tuple[str, ast.AST, str]  # as ``analyze.Anchor``
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@attrs.frozen
class _Known:
    """At one anchor: the keys of the fixed tests that ran on every path to it, and the facts its enclosing
    branches give."""

    ran: frozenset[str] = frozenset()
    facts: frozenset[Fact] = frozenset()


@attrs.frozen(eq=False)
class FixedTests:
    """The fixed values of one caller, the facts each planned call's statement forks under (by site), and what is
    known at each anchor."""

    tests: dict[ast.If, Fact] = attrs.field(factory=dict)  # each ``if`` whose test reads fixed values: its fact
    forks_under: dict[int, frozenset[Fact]] = attrs.field(factory=dict)
    known: dict[_Anchor, _Known] = attrs.field(factory=dict)

    def branches(self, chain: list[ast.If]) -> list[frozenset[Fact]]:
        """What each body of an ``if``/``elif`` chain knows, then what its ``else`` knows."""
        known: list[frozenset[Fact]] = []
        before: frozenset[Fact] = frozenset()
        for link in chain:
            fact = self.tests.get(link)
            known.append(before | {fact} if fact else before)
            before = before | {(fact[0], not fact[1])} if fact else before
        return [*known, before]

    def narrowed(self, state: State | None, known: frozenset[Fact]) -> State | None:
        """``state`` entering a branch that knows ``known``: without the calls that forked only where a contrary
        fact held, the calls pending only where one held joined, and the rest knowing ``known`` too."""
        if state is None or not known:
            return state
        contrary = {(key, not truth) for key, truth in known}
        kept = [p for p in state if not self.forks_under.get(p.site, frozenset()) & contrary]
        return tuple(entry for p in kept for entry in _entered(p, known, contrary))

    def retested(self, site: int, where: frozenset[Fact], anchor: _Anchor) -> frozenset[Fact]:
        """Of ``where``, the facts a wait for ``site`` at ``anchor`` reads again: their test ran on every path to it
        (reading it again raises nothing), and neither a branch around it nor the call's own fork (the wait runs
        only where it forked) already gives them."""
        known = self.known.get(anchor, _Known())
        given = known.facts | self.forks_under.get(site, frozenset())
        return frozenset(f for f in where if f[0] in known.ran and f not in given)


def _entered(entry: Pending, known: frozenset[Fact], contrary: set[Fact]) -> State:
    """``entry`` in a branch that knows ``known``: joined already where it was pending only where a ``contrary``
    fact held (gone, if it did not fork on every path), else knowing ``known`` too."""
    if entry.pending and entry.where & contrary:
        return joined((entry,), [entry.site])
    return (attrs.evolve(entry, where=entry.where | known),)


def fixed_tests(fn: _Function, sites: dict[ast.stmt, int]) -> FixedTests:
    """The fixed tests of ``fn``, and for each statement of ``sites`` (its site index) the facts it forks under."""
    tests, known = _read(fn)
    if not tests:
        return FixedTests()
    under = {i: known["before", s, ""].facts for s, i in sites.items() if known["before", s, ""].facts}
    return FixedTests(tests=tests, forks_under=under, known=known)


@per_node
def _read(fn: _Function) -> tuple[dict[ast.If, Fact], dict[_Anchor, _Known]]:
    """The fact of each ``if`` of ``fn`` whose test reads fixed values, and what is known at each anchor."""
    values = fixed_values(fn)
    tests: dict[ast.If, Fact] = {}
    known: dict[_Anchor, _Known] = {}
    if values:
        _walk(fn, "body", _Known(), values, tests, known)
    return tests, known


def _walk(
    owner: ast.AST,
    field: str,
    known: _Known,
    values: FixedValues,
    tests: dict[ast.If, Fact],
    out: dict[_Anchor, _Known],
) -> None:
    """What is known at each anchor of the block ``owner.<field>`` and the blocks in it. An ``if`` test ran in both
    branches and after the ``if`` (not after a loop, ``try`` or ``with`` holding it: a path may skip it or leave
    it by an exception); its fact holds in its body, the contrary one in its ``else``."""
    for stmt in getattr(owner, field):
        out["before", stmt, ""] = known
        if isinstance(stmt, ast.If):
            fact = fact_of(stmt.test, values)
            if fact is not None:
                tests[stmt] = fact
                known = attrs.evolve(known, ran=known.ran | {fact[0]})
            for branch, truth in (("body", True), ("orelse", False)):
                facts = known.facts | {(fact[0], fact[1] == truth)} if fact else known.facts
                _walk(stmt, branch, attrs.evolve(known, facts=facts), values, tests, out)
        elif not isinstance(stmt, _DEFS):
            for part, inner in _blocks(stmt):
                _walk(part, inner, known, values, tests, out)
    out["end", owner, field] = known


def _blocks(stmt: ast.stmt) -> list[tuple[ast.AST, str]]:
    """The statement blocks of a compound statement other than ``if``: each as its owner and field."""
    parts = [stmt, *getattr(stmt, "handlers", []), *getattr(stmt, "cases", [])]
    return [(p, f) for p in parts for f in ("body", "orelse", "finalbody") if getattr(p, f, None)]
