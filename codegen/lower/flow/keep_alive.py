"""Which values a call's stream, or the caller's stream after a join, keeps alive (``record_stream``).

- an input kept alive for the side stream: only a tensor the side stream did not make whose last use may come
  before the caller's stream joins (a name the caller reads again after the join needs none, nor a parameter that
  every caller of the function reads again after the call, ``codegen/index/held_params.py``, nor an input the call
  returns as it came where the caller reads that result after the join, ``returned_inputs.py``; nor one
  an earlier call made on another side stream that issues nothing more before that join, and one the caller made
  when it runs no op from the call to the join: :mod:`~codegen.lower.flow.quiet`);
- a result kept alive for the caller's stream: only when a later call on the same stream skips its fork, so the
  side stream could reuse the result's memory while the caller still reads it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import attrs

from codegen.frontend.signature import Tensorness
from codegen.index.used_params import element
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names, data_reads
from codegen.lower.flow.fork import same_stream
from codegen.lower.flow.item_stores import container_item
from codegen.lower.flow.loop_views import loop_base
from codegen.lower.flow.quiet import maker_idle, maker_waits, quiet_until, surely_joined_at
from codegen.lower.flow.schema import aliases_self, tensors_only
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import COMPOUND, argument_names, viewed
from codegen.lower.flow.transfer import Join
from codegen.lower.plan import Value

__all__ = ["Ahead", "Kept", "inputs_to_keep", "results_to_keep"]

Kept = dict[tuple[str, str], ast.stmt]  # (name, tag) -> the call that kept it alive
Ahead = dict[tuple[ast.stmt, str], Value]  # (loop, tag) -> the tensor kept alive before the loop


def inputs_to_keep(
    facts: CallerFacts, site: Site, applied: Mapping[ast.stmt, str], kept: Kept, ahead: Ahead
) -> list[Value]:
    """The inputs to keep alive for the call's stream (in argument order, each once in the function: each one
    is added to ``kept``; ``applied``: the statements whose first operand runs before their wait; ``ahead``
    gets the tensors kept once before a loop over their views, ``loop_views.py``)."""
    state = facts.result.states.get(site.stmt, ())
    own = same_stream(state, site, facts.relations)
    values: list[Value] = []
    hoisted = dict(facts.syncs[site.index].hoisted)
    join = surely_joined_at(facts, site)
    quiet = join is not None and quiet_until(facts, site, join, applied)
    made_by_calls = {n for other in facts.sites for n in bound_names(other.stmt)} if quiet else set()
    storages: set[ast.stmt] = set()  # the splits one of whose views is kept already
    for argument in site.args:
        root = viewed(argument.node) if argument.slot in hoisted and not container_item(argument.node) else None
        for name in argument_names(argument, facts.receiver, hoisted):
            key = (name, site.tag)
            split = split_of(facts, site.stmt, name)
            if (
                name in own
                or split in storages
                or _kept_before(facts, kept, key, site.stmt)
                or _held_past_join(facts, site, root or name, applied)
                or _held_by_results(facts, site, name, applied)
                or _held_by_callers(facts, site, name)
                or (join is not None and maker_idle(facts, site, name, join, applied))
                or maker_waits(facts, site, name)
                or (quiet and name not in made_by_calls)  # made on the caller's stream
            ):
                continue
            kept[key] = site.stmt
            storages |= {split} if split is not None else set()
            looped = loop_base(facts, site, name)
            if looped is not None:
                ahead.setdefault((looped[0], site.tag), Value(name=looped[1]))
                continue
            whole = argument.bare or argument.slot in hoisted
            value = Value(name=name, tensor=argument.tensor) if whole else Value(name=name)
            values.append(attrs.evolve(value, tensor=Tensorness.TENSOR) if name in facts.tensors else value)
    return values


def results_to_keep(facts: CallerFacts, join: Join, forks: list[bool]) -> tuple[Value, ...]:
    """The results to keep alive for the caller's stream at ``join`` (``forks``: whether each call forks)."""
    site = facts.sites[join.site]
    made = join.names - _state_made_elsewhere(site)
    if not made or not _keeps_results(facts, site, forks):
        return ()
    return tuple(Value(name=n) for n in sorted(made))


def split_of(facts: CallerFacts, stmt: ast.stmt, name: str) -> ast.stmt | None:
    """The statement that bound ``name`` as one of several views of one tensor (``a, b = x.split(n)``: a
    ``record_stream`` of one keeps the storage of all), when that binding reaches ``stmt`` in its block."""
    block = facts.block(stmt)
    for earlier in reversed(block[: block.index(stmt)]):
        if name in bound_names(earlier):
            return earlier if _unpacks_views(earlier) else None
    return None


def _unpacks_views(stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)):
        return False
    call = stmt.value
    method = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else ""
    names = all(isinstance(t, ast.Name) for t in stmt.targets[0].elts)
    return names and aliases_self(method) and tensors_only(method)


def _kept_before(facts: CallerFacts, kept: Kept, key: tuple[str, str], stmt: ast.stmt) -> bool:
    """An earlier call of the same block kept this name alive for this stream, and nothing rebound it since."""
    earlier = kept.get(key)
    block = facts.block(stmt)
    if earlier is None or earlier not in block or block.index(earlier) > block.index(stmt):
        return False
    between = block[block.index(earlier) + 1 : block.index(stmt)]
    return not any(key[0] in bound_names(s) for s in between)


def _held_by_results(facts: CallerFacts, site: Site, name: str, applied: Mapping[ast.stmt, str]) -> bool:
    """The call returns what it reads of ``name`` as it came (``returned_inputs.py``), and the caller reads each
    result holding it at or after every join of the call."""
    holders = facts.returned.get(site.call.call, {}).get(name, frozenset())
    return bool(holders) and all(_held_past_join(facts, site, r, applied, result=True) for r in holders)


def _held_by_callers(facts: CallerFacts, site: Site, name: str) -> bool:
    """Every caller of the function reads again after the call (``held_params.py``), which comes after this call's
    join, the parameter ``name`` or the element of a tuple parameter that ``name`` is unpacked from; the function
    binds neither otherwise."""
    if not facts.held_params or not site.callee.auto:  # type: ignore[attr-defined]
        return False
    binders = [s for s in facts.blocks if name in bound_names(s) and not isinstance(s, COMPOUND)]
    key = name if not binders else _unpacked(binders, name)
    if key is None or key not in facts.held_params:
        return False
    tuple_name = key.partition("[")[0]
    headers = [s for s in facts.blocks if isinstance(s, COMPOUND) and {name, tuple_name} & _header_binds(s)]
    return not headers and not any(tuple_name in bound_names(s) for s in facts.simple if tuple_name != name)


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


def _held_past_join(
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
            found = _first_use(later, name)
            if found is not None:
                return found
        stmt = _after_if(facts, block)
    return False


def _first_use(stmt: ast.stmt, name: str) -> bool | None:
    """True: ``stmt`` reads ``name``; False: it may rebind it or leave (or is compound); None: look further."""
    if isinstance(stmt, COMPOUND):
        return False
    if name in data_reads(stmt):
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


def _keeps_results(facts: CallerFacts, site: Site, forks: list[bool]) -> bool:
    """A later call on the same stream skips its fork: its allocations could reuse a result still being read."""
    line = site.stmt.lineno
    loop = site.stmt in facts.looped
    return any(
        other.tag == site.tag and not fork and (loop or other.stmt.lineno > line)
        for other, fork in zip(facts.sites, forks)
        if other is not site
    )


def _state_made_elsewhere(site: Site) -> frozenset[str]:
    """``self.buf`` of a callee that only writes ``buf`` in place: no memory of its stream to keep alive."""
    receiver = site.call.resolved.receiver
    in_place = site.callee.state_in_place  # type: ignore[attr-defined]
    return frozenset(f"{receiver}.{attr}" for attr in in_place) if receiver else frozenset()
