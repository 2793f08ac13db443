"""Which values a call's stream, or the caller's stream after a join, keeps alive (``record_stream``).

- an input kept alive for the side stream: only a tensor the side stream did not make whose last use may come
  before the caller's stream joins (a name the caller reads again after the join needs none, nor a parameter that
  every caller of the function reads again after the call, nor an input the call returns as it came where the
  caller reads that result after the join: :mod:`~codegen.lower.flow.held_past_join`; nor one
  an earlier call made on another side stream that issues nothing more before that join, and one the caller made
  when it runs no op from the call to the join: :mod:`~codegen.lower.flow.quiet`; nor one an earlier call on the
  stream kept wherever this call runs: :mod:`~codegen.lower.flow.kept_earlier`);
- a result kept alive for the caller's stream: only when a later call on the same stream skips its fork, so the
  side stream could reuse the result's memory while the caller still reads it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import attrs

from codegen.frontend.signature import Tensorness
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.held_past_join import held_by_callers, held_by_results, held_past_join
from codegen.lower.flow.item_stores import container_item
from codegen.lower.flow.kept_earlier import Kept, kept_earlier
from codegen.lower.flow.loop_views import loop_base
from codegen.lower.flow.quiet import maker_idle, maker_waits, quiet_until, surely_joined_at
from codegen.lower.flow.schema import aliases_self, tensors_only
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import argument_names, viewed
from codegen.lower.flow.stream_made import stream_made
from codegen.lower.flow.transfer import Join
from codegen.lower.plan import Value

__all__ = ["Ahead", "Kept", "inputs_to_keep", "results_to_keep"]

Ahead = dict[tuple[ast.stmt, str], Value]  # (loop, tag) -> the tensor kept alive before the loop


def inputs_to_keep(
    facts: CallerFacts, site: Site, applied: Mapping[ast.stmt, str], kept: Kept, ahead: Ahead
) -> list[Value]:
    """The inputs to keep alive for the call's stream (in argument order, each once in the function: each one
    is added to ``kept``; ``applied``: the statements whose first operand runs before their wait; ``ahead``
    gets the tensors kept once before a loop over their views, ``loop_views.py``)."""
    state = facts.result.states.get(site.stmt, ())
    own = stream_made(state, site, facts)
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
                or kept_earlier(facts, kept, key, site)
                or held_past_join(facts, site, root or name, applied)
                or held_by_results(facts, site, name, applied)
                or held_by_callers(facts, site, name)
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
