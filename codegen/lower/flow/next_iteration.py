"""Keeps only a next iteration needs, and a join recorded only by the last: a call ending a loop body, joined after it.

vllm_qwen3_dbo's combine is the last statement of its micro-batch loop, and the function waits for it right after
the loop, before it returns. Its inputs (``router_expert_output[i]``, the dispatcher's ``topk_weights``) need a
``record_stream`` only where the caller's stream may allocate before that wait: in the next iteration (the next
micro-batch's experts). After the last one, the loop ends and the wait comes first: nothing can reuse their memory
while the communication stream reads them. The planner sees one site per loop body, so the keep is spelled once,
under a test of whether another iteration follows: ``i + 1 < n`` read into a flag before the call (the hand-written
version's ``if last != (True, True):``). A model's layer loop offloading each layer's output
(``for i, layer in enumerate(self.layers)``) tests ``i + 1 < len(self.layers)``, as the hand version does.

Only where that test is exact: the call's statement stands in the body of a ``for`` loop with no ``else``, and what
follows it there runs no op on the caller's stream (names copied, views taken, ``if`` tests that only compare:
``if next_layer is not None: up_weight = next_up_weight``); the loop walks ``range(n)`` of one argument, an integer
constant or a name bound only by ``n = len(...)`` and not in the loop, with a target the body binds nowhere else,
or ``enumerate`` of a layer list of the caller's object, one whose length nothing changes after ``__init__``
(``codegen/index/elements.py``), with an index the body binds nowhere else; the statement right after the loop has
the call's join (or that of a later call on its stream covering it) placed before it, and is no split statement
(whose first operand would run before the wait). On the path out of the loop nothing runs between the call and its
join. A call right after another call on its stream, with nothing placed between them, is left as it is: the two
may share one ``with`` (``fold.py``), which the flag's assignment between them would part.

The same test says where the call's join event must be recorded (``last_record``): where its only wait is that
one after the loop (no wait or relay of its event in the loop, no later call recording it, ``shared_join.py``), and
the loop can end only by running out (no ``break`` or ``continue`` of its own, no ``return``: ``loop_exits.py``; an
inner loop's ``break`` leaves only that loop), a wait reads the last record before it, the last iteration's: the
others record for no one. The offload of every layer records its join once, after the last layer's copy.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.aliasing import aliasing
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import leaves, runs_op
from codegen.lower.flow.ge_before import works
from codegen.lower.flow.loop_count import enumerated, range_loop
from codegen.lower.flow.loop_exits import leaves_early
from codegen.lower.flow.loop_slots import loop_slots
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import COMPOUND
from codegen.lower.flow.transfer import Join, Relay
from codegen.lower.plan import Anchor, Step

__all__ = ["another_iteration", "last_record"]

Steps = dict[Anchor, list[Step]]


def another_iteration(
    facts: CallerFacts, site: Site, applied: dict[ast.stmt, str], steps: Steps, sized: frozenset[str] = frozenset()
) -> str | None:
    """``"i + 1 < n"``: the call's keeps are needed only where this test holds at the call (None: everywhere;
    ``steps``: those placed so far, ``applied``: the split statements; ``sized``: the caller's object's layer
    lists)."""
    loop = facts.owner(site.stmt)
    if not isinstance(loop, ast.For) or loop.orelse or not any(s is site.stmt for s in loop.body):
        return None
    at = next(i for i, s in enumerate(loop.body) if s is site.stmt)
    if not all(_quiet(facts, s) for s in loop.body[at + 1 :]):
        return None
    if at and _may_share(facts, site, loop.body[at - 1], steps):
        return None
    index, count = _walked(facts, loop, sized)
    outer = facts.block(loop)
    after = outer[outer.index(loop) + 1] if outer.index(loop) + 1 < len(outer) else None
    if not index or not count or after is None or after in applied or not _joined_before(facts, site, after):
        return None
    return f"{index} + 1 < {count}"


def last_record(facts: CallerFacts, site: Site, joined_as: dict[int, int]) -> bool:
    """The call's join event needs recording only in the last iteration (with ``another_iteration``'s test): its
    every wait or relay stands right after the loop, no other call records it, and the loop ends only by running
    out."""
    loop = facts.owner(site.stmt)
    if (
        not isinstance(loop, ast.For)
        or leaves_early(loop)
        or site.index in loop_slots(facts.relations).read({site.index})
    ):
        return False  # a staging's waits read its records by slot (``loop_parity.py``)
    if any(site.index in (k, v) for k, v in joined_as.items() if k != v):
        return False
    outer = facts.block(loop)
    after = outer[outer.index(loop) + 1] if outer.index(loop) + 1 < len(outer) else None
    return all(
        anchor == ("before", after, "") and isinstance(step, Join)
        for anchor, found in facts.result.steps.items()
        for step in found
        if isinstance(step, (Join, Relay)) and step.site == site.index
    )


def _quiet(facts: CallerFacts, stmt: ast.stmt) -> bool:
    """The statement runs no op on the caller's stream and stays in its block: it copies names or takes views,
    or is an ``if`` whose test only compares, around such statements; it holds no planned call."""
    if any(s.stmt is stmt for s in facts.sites):
        return False
    if isinstance(stmt, ast.If):
        return not works(stmt.test) and all(_quiet(facts, s) for s in [*stmt.body, *stmt.orelse])
    return not isinstance(stmt, COMPOUND) and not leaves(stmt) and (not runs_op(stmt) or aliasing(stmt) is not None)


def _may_share(facts: CallerFacts, site: Site, before: ast.stmt, steps: Steps) -> bool:
    """The statement ``before`` the call is a call on its stream with nothing placed after it: the two may share
    one ``with`` (``fold.py``), which the flag's assignment between them would part."""
    return not steps.get(("after", before, "")) and any(s.stmt is before and s.tag == site.tag for s in facts.sites)


def _walked(facts: CallerFacts, loop: ast.For, sized: frozenset[str]) -> tuple[str, str]:
    """(the loop's index, its count): ``i, n`` of ``for i in range(n)`` (``n`` an integer constant, or a name bound
    only by ``n = len(...)``, outside the loop), ``i, len(self.layers)`` of ``for i, x in enumerate(self.layers)``
    (``loop_count.py``); empty where the loop is neither or its body binds the index."""
    index, count = enumerated(loop, facts.receiver, sized)
    if index:
        return index, count
    counted = range_loop(loop)
    if counted is None or not counted.index_kept() or not counted.a_length(facts.blocks):
        return "", ""
    return counted.index, ast.unparse(counted.count)


def _joined_before(facts: CallerFacts, site: Site, stmt: ast.stmt) -> bool:
    """The call's join, or that of a call covering it, is placed right before ``stmt``."""
    return any(
        kind == "before" and anchored is stmt
        for (kind, anchored, _), found in facts.result.steps.items()
        for step in found
        if isinstance(step, Join) and (step.site == site.index or facts.relations.covers(site.index, step.site))
    )
