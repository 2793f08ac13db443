"""Keeps only a next iteration needs: a call last in a ``for i in range(n)`` body, joined right after the loop.

vllm_qwen3_dbo's combine is the last statement of its micro-batch loop, and the function waits for it right after
the loop, before it returns. Its inputs (``router_expert_output[i]``, the dispatcher's ``topk_weights``) need a
``record_stream`` only where the caller's stream may allocate before that wait: in the next iteration (the next
micro-batch's experts). After the last one, the loop ends and the wait comes first: nothing can reuse their memory
while the communication stream reads them. The planner sees one site per loop body, so the keep is spelled once,
under a test of whether another iteration follows: ``i + 1 < n`` read into a flag before the call (the hand-written
version's ``if last != (True, True):``).

Only where that test is exact: the call's statement is the last of the body of a ``for`` loop with no ``else``,
whose target is a name the body binds nowhere else and whose iterable is ``range(n)`` of one argument, an integer
constant or a name bound only by ``n = len(...)`` and not in the loop; the statement right after the loop has the
call's join (or that of a later call on its stream covering it) placed before it, and is no split statement (whose
first operand would run before the wait). On the path out of the loop nothing runs between the call and its join. A
call right after another call on its stream, with nothing placed between them, is left as it is: the two may share
one ``with`` (``fold.py``), which the flag's assignment between them would part.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.sites import Site
from codegen.lower.flow.transfer import Join
from codegen.lower.plan import Anchor, Step

__all__ = ["another_iteration"]

Steps = dict[Anchor, list[Step]]


def another_iteration(facts: CallerFacts, site: Site, applied: dict[ast.stmt, str], steps: Steps) -> str | None:
    """``"i + 1 < n"``: the call's keeps are needed only where this test holds at the call (None: everywhere;
    ``steps``: those placed so far, ``applied``: the split statements)."""
    loop = facts.owner(site.stmt)
    if not isinstance(loop, ast.For) or loop.orelse or not loop.body or loop.body[-1] is not site.stmt:
        return None
    if len(loop.body) > 1 and _may_share(facts, site, loop.body[-2], steps):
        return None
    index, count = _target(loop), _count(facts, loop)
    outer = facts.block(loop)
    after = outer[outer.index(loop) + 1] if outer.index(loop) + 1 < len(outer) else None
    if not index or not count or after is None or after in applied or not _joined_before(facts, site, after):
        return None
    return f"{index} + 1 < {count}"


def _may_share(facts: CallerFacts, site: Site, before: ast.stmt, steps: Steps) -> bool:
    """The statement ``before`` the call is a call on its stream with nothing placed after it: the two may share
    one ``with`` (``fold.py``), which the flag's assignment between them would part."""
    return not steps.get(("after", before, "")) and any(s.stmt is before and s.tag == site.tag for s in facts.sites)


def _target(loop: ast.For) -> str:
    """The loop's target, a name nothing in its body binds."""
    target = loop.target
    if not isinstance(target, ast.Name) or any(target.id in bound_names(s) for s in loop.body):
        return ""
    return target.id


def _count(facts: CallerFacts, loop: ast.For) -> str:
    """``n`` of ``range(n)``: an integer constant, or a name bound only by ``n = len(...)``, outside the loop."""
    call = loop.iter
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range"):
        return ""
    if len(call.args) != 1 or call.keywords:
        return ""
    count = call.args[0]
    if isinstance(count, ast.Constant) and type(count.value) is int:
        return str(count.value)
    if not isinstance(count, ast.Name):
        return ""
    binders = [s for s in facts.blocks if count.id in bound_names(s)]
    inside = {id(n) for n in walked_of(loop, ast.stmt)}
    return count.id if binders and all(_len_of(s, count.id) and id(s) not in inside for s in binders) else ""


def _len_of(stmt: ast.stmt, name: str) -> bool:
    """``name = len(...)``."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    value = stmt.value
    is_len = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "len"
    return stmt.targets[0].id == name and is_len


def _joined_before(facts: CallerFacts, site: Site, stmt: ast.stmt) -> bool:
    """The call's join, or that of a call covering it, is placed right before ``stmt``."""
    return any(
        kind == "before" and anchored is stmt
        for (kind, anchored, _), found in facts.result.steps.items()
        for step in found
        if isinstance(step, Join) and (step.site == site.index or facts.relations.covers(site.index, step.site))
    )
