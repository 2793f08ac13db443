"""A call that reads a result only earlier calls on its stream bind needs no fork of its own, when nothing else it
reads changed on the caller's stream since: those calls' forks ordered its stream after that work already.

vllm-ascend's DeepSeek-V4 indexer: ``if kv is not None: kv, kv_scale = self._quantize_key_and_update_cache(kv,
k_cache, slots)``, the query's matmul and rotary embedding on main, then ``if kv is not None and kv_scale is not
None: self._update_scale_cache(kv_scale, scale_cache, slots)``. The scale update is given ``kv_scale``, which
only the key update binds (``call_bound.py``): wherever it runs, the key update ran before it, on the same stream
under the same guard, after that call's fork. ``scale_cache`` and ``slots`` the caller made before that fork, and
nothing between binds them or writes in place: the stream waited for them already. The fork was in a sibling
``if``, not on every path to the call (``reuse.py``'s rule), but on every path where the call runs.

Between the binders and the call (every statement whose lines lie between, on any branch, none in a loop): no
compound statement but ``if``; nothing binds or deletes what the call reads, or its guard's root; nothing writes
in place what may share memory with what it reads (``binding_aliases.py``; itself, or through a helper of the
module), stores an attribute, or reads a result of the call's stream; a call on the caller's object only where
the call reads none of that object's state. The call computes
no argument on the caller's stream just before it.
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.binding_aliases import widened
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.crossing_calls import touches_across
from codegen.lower.flow.exprs import bound_names, data_reads, deleted_names
from codegen.lower.flow.fold import Fork
from codegen.lower.flow.fork import call_inputs
from codegen.lower.flow.object_calls import calls_receiver, stores_attribute
from codegen.lower.flow.sites import Site
from codegen.lower.flow.writes import inplace_writes

__all__ = ["bound_fork"]


def bound_fork(facts: CallerFacts, site: Site, forked_at: dict[ast.stmt, Fork]) -> Fork | None:
    """The fork of the calls that bind a result ``site`` is given whole, when it orders ``site`` too."""
    sync = facts.syncs[site.index]
    if sync.hoisted or site.stmt in facts.looped:
        return None
    only: dict[str, frozenset[int]] = getattr(facts.relations, "made_only_by", {})
    for arg in site.args:
        binders = only.get(arg.name or "", frozenset()) if arg.bare else frozenset()
        forks = [_binder_fork(facts, site, facts.sites[i], forked_at) for i in sorted(binders)]
        if forks and all(f is not None and f == forks[0] for f in forks) and _quiet(facts, site, binders):
            return forks[0]
    return None


def _binder_fork(facts: CallerFacts, site: Site, binder: Site, forked_at: dict[ast.stmt, Fork]) -> Fork | None:
    """The fork ``binder`` waited for, where it runs on ``site``'s stream under its guard, before it, in no loop."""
    found = forked_at.get(binder.stmt)
    before = (binder.stmt.end_lineno or binder.stmt.lineno) < site.stmt.lineno
    if found is None or site.tag not in found[2] or not before or binder.stmt in facts.looped:
        return None
    relations, syncs = facts.relations, facts.syncs  # one guard, read once: each forks wherever the other does
    same = relations.covers(binder.index, site.index) and relations.covers(site.index, binder.index)
    same = same and facts.same_guard(syncs[binder.index].guard_text, syncs[site.index].guard_text)
    return found if same and binder.tag == site.tag else None


def _quiet(facts: CallerFacts, site: Site, binders: frozenset[int]) -> bool:
    """Nothing between the first binder and the call that the call would need a fork of its own for."""
    start = min(_at(facts.sites[i].stmt) for i in binders)
    skipped = {facts.sites[i].stmt for i in binders}
    nodes = [n for n in _between(facts, start, _at(site.stmt)) if n not in skipped]
    guard = facts.syncs[site.index].guard_text
    reads = frozenset(call_inputs(facts, site))
    held = _Held(
        names=reads | ({guard.split(".")[0]} if guard else set()),
        memory=widened(reads, facts.planned.groups),
        stream=frozenset().union(*(s.names for s in facts.sites if s.tag == site.tag)),
        state=bool(site.state_read(frozenset())),
        site=site,
    )
    return all(_still(facts, node, held) for node in nodes)


@attrs.frozen(kw_only=True)
class _Held:
    names: frozenset[str]  # what the call reads, and its guard's root: nothing between may bind them
    memory: frozenset[str]  # the names that may share memory with what it reads: nothing may write them in place
    stream: frozenset[str]  # what calls on its stream bind: the caller's stream reads none of it
    state: bool  # it reads state of the caller's object: nothing between calls on that object
    site: Site  # the call: a call between on a third stream touches none of its memory (``crossing_calls.py``)


def _at(node: ast.stmt | ast.expr) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _end(node: ast.stmt) -> tuple[int, int]:
    return node.end_lineno or node.lineno, node.end_col_offset or 0


def _between(facts: CallerFacts, start: tuple[int, int], end: tuple[int, int]) -> list[ast.AST]:
    """What runs between two points of the function, on any branch: its simple statements, the tests of its ``if``
    statements, and any other compound statement that begins or ends there (one around both is no matter)."""
    found: list[ast.AST] = []
    for stmt in facts.blocks:
        inside = start <= _at(stmt) < end
        if isinstance(stmt, ast.If):
            found += [stmt.test] if start <= _at(stmt.test) < end else []
        elif hasattr(stmt, "body"):
            found += [stmt] if inside or start <= _end(stmt) < end else []
        elif inside:
            found.append(stmt)
    return found


def _still(facts: CallerFacts, node: ast.AST, held: _Held) -> bool:
    if isinstance(node, ast.stmt) and hasattr(node, "body"):
        return False  # a loop, a ``with``, a ``try``, a ``match``, a definition
    planned = next((s for s in facts.sites if s.stmt is node), None)
    if planned is not None:  # it runs on its own stream: what it binds matters, and on a third stream what it touches
        return not (bound_names(node) & held.names or touches_across(facts, held.site, planned))
    deleted = deleted_names(node) if isinstance(node, ast.Delete) else set()
    helped = facts.relations.dropped.get(node, frozenset()) if isinstance(node, ast.stmt) else frozenset()
    if (bound_names(node) | deleted) & held.names or (inplace_writes(node) | helped) & held.memory:
        return False
    if stores_attribute(node) or data_reads(node) & held.stream:
        return False
    return not (held.state and calls_receiver(node, facts.receiver))
