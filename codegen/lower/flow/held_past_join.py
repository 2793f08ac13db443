"""Whether the caller holds an input of a call past every join of it, so the side stream needs no keep of it.

A tensor the caller reads again after the call's join cannot be freed while the side stream reads it: the read
comes after the wait. So ``keep_alive.py`` keeps no input that the caller reads at or after every join (a name of
its own, a result the call returns holding it as it came, ``returned_inputs.py``), nor a parameter that every
caller of the function reads again after the call (``codegen/index/held_params.py``); one every caller reads again
only where a test of its object's fixed state holds is kept only where the test fails (``held_where.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.index.used_params import element
from codegen.lower.flow.binding_aliases import containers
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names, data_reads
from codegen.lower.flow.held_where import unless
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import COMPOUND
from codegen.lower.flow.transfer import Join
from codegen.lower.flow.value_views import passed_whole
from codegen.lower.plan import Value

__all__ = ["held_by_callers", "held_by_results", "held_past_join", "kept_unless_held", "param_key"]


def held_by_results(facts: CallerFacts, site: Site, name: str, applied: Mapping[ast.stmt, str]) -> bool:
    """The call returns what it reads of ``name`` as it came (``returned_inputs.py``), and the caller reads each
    result holding it at or after every join of the call."""
    holders = facts.returned.get(site.call.call, {}).get(name, frozenset())
    return bool(holders) and all(held_past_join(facts, site, r, applied, result=True) for r in holders)


def held_by_callers(facts: CallerFacts, site: Site, name: str) -> bool:
    """Every caller of the function reads again after the call (``held_params.py``), which comes after this call's
    join, the parameter ``name`` or the element of a tuple parameter that ``name`` is unpacked from; the function
    binds neither otherwise."""
    if not facts.held_params:
        return False
    return param_key(facts, site, name) in facts.held_params


def param_key(facts: CallerFacts, site: Site, name: str) -> str | None:
    """The parameter ``name`` is, or the element of a tuple parameter it is unpacked from (``"kv_cache[4]"``),
    where the function binds neither otherwise and the call is automatic (None: anything else)."""
    if not site.callee.auto:  # type: ignore[attr-defined]
        return None
    binders = [s for s in facts.blocks if name in bound_names(s) and not isinstance(s, COMPOUND)]
    key = name if not binders else _unpacked(binders, name)
    if key is None:
        return None
    tuple_name = key.partition("[")[0]
    headers = [s for s in facts.blocks if isinstance(s, COMPOUND) and {name, tuple_name} & _header_binds(s)]
    rebound = any(tuple_name in bound_names(s) for s in facts.simple if tuple_name != name)
    return None if headers or rebound else key


def kept_unless_held(
    facts: CallerFacts, site: Site, values: list[Value], held: Mapping[str, str]
) -> tuple[list[Value], dict[str, list[Value]]]:
    """``values`` split: those kept whatever happens, and by test those every caller reads again after the call
    where the test holds (``held_where.py``): kept only where it fails, under ``unless(test)``."""
    whole: list[Value] = []
    unless_held: dict[str, list[Value]] = {}
    for value in values:
        key = param_key(facts, site, value.name) if held else None
        if key in held:
            unless_held.setdefault(unless(held[key]), []).append(value)  # type: ignore[index]
        else:
            whole.append(value)
    return whole, unless_held


def _unpacked(binders: list[ast.stmt], name: str) -> str | None:
    """``"kv_cache[4]"`` where the one statement binding ``name`` is ``_, ..., name, ... = kv_cache``."""
    stmt = binders[0] if len(binders) == 1 else None
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Name)):
        return None
    target = stmt.targets[0]
    elts = target.elts if isinstance(target, ast.Tuple) else []
    found = [k for k, e in enumerate(elts) if isinstance(e, ast.Name) and e.id == name]
    return element(stmt.value.id, found[0]) if len(found) == 1 else None


def _header_binds(stmt: ast.stmt) -> frozenset[str]:
    """What a compound statement binds itself (a loop's target, ``with ... as``), not its body."""
    inner = [c for c in ast.iter_child_nodes(stmt) if isinstance(c, ast.stmt)]
    return bound_names(stmt) - frozenset().union(*(bound_names(c) for c in inner))


def held_past_join(
    facts: CallerFacts, site: Site, name: str, applied: Mapping[ast.stmt, str], *, result: bool = False
) -> bool:
    """The caller reads ``name`` at or after every join of the call, and binds nothing to it in between
    (``result``: ``name`` is a result the call's own statement binds)."""
    if not site.callee.auto or site.stmt in facts.looped or (name in bound_names(site.stmt)) is not result:  # type: ignore[attr-defined]
        return False  # a name the call's own statement rebinds holds its result afterwards, not the input
    joins = [
        anchor
        for anchor, found in facts.result.steps.items()
        for step in found
        if isinstance(step, Join) and (step.site == site.index or facts.relations.covers(site.index, step.site))
    ]  # a later call on the call's stream whose join also joins the call's work
    if not joins or any(kind != "before" for kind, _, _ in joins):
        return False
    return all(
        stmt not in applied and _read_later(facts, site.stmt, stmt, name)  # type: ignore[arg-type]
        for _, stmt, _ in joins
    )  # a split statement reads its first operand's names before the wait


def _read_later(facts: CallerFacts, call: ast.stmt, join: ast.stmt, name: str) -> bool:
    """``name`` is read at the join or by a statement after it that surely runs (from the join on, before any
    compound statement or jump; past the end of an ``if`` branch into what follows the ``if``), and nothing binds
    it between the call and that read."""
    between = [s for s in facts.simple if call.lineno < s.lineno < join.lineno]
    if any(name in bound_names(s) for s in between):
        return False
    stmt: ast.stmt | None = join
    while stmt is not None:
        block = facts.block(stmt)
        for later in block[block.index(stmt) :]:
            found = _first_use(later, name, name in containers(facts.simple))
            if found is not None:
                return found
        stmt = _after_if(facts, block)
    return False


def _first_use(stmt: ast.stmt, name: str, listed: bool) -> bool | None:
    """True: ``stmt`` reads ``name``; False: it may rebind it or leave (or is compound); None: look further.
    ``listed``: ``name`` is a container, read only where handed whole to a call (``value_views.passed_whole``)."""
    if isinstance(stmt, COMPOUND):
        return False
    if name in data_reads(stmt) and (not listed or passed_whole(stmt, name)):
        return True
    if name in bound_names(stmt) or isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return False
    return None


def _after_if(facts: CallerFacts, block: list[ast.stmt]) -> ast.stmt | None:
    """The statement that runs after ``block`` when it is a branch of an ``if`` (None: not a branch, or nothing
    follows in the function)."""
    owner = facts.owner(block[0])
    if not isinstance(owner, ast.If):
        return None
    outer = facts.block(owner)
    after = outer.index(owner) + 1
    return outer[after] if after < len(outer) else _after_if(facts, outer)
