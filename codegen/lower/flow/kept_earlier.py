"""An input an earlier call on the same stream kept alive wherever this call runs needs no ``record_stream`` of its own.

``record_stream(t, side)`` tells the allocator that ``t``'s memory, once freed, waits for the work the side stream
has queued by then: one keep covers every later read of ``t`` on that stream, however many calls read it. The
keep decided at the fork (``keep_alive.py``) was skipped only after a keep by an earlier call of the same block.
vllm-ascend's DeepSeek-V4 indexer updates its key cache under ``if kv is not None:``, keeping ``slots`` for the
overlap stream, and its scale cache, given the key update's ``kv_scale``, under ``if kv is not None and kv_scale
is not None:``: it kept ``slots`` again, in every c4 layer.

An earlier call's keep of a name serves a later call on the same stream, under the same guard read once (each
forks wherever the other does), neither in a loop, where the later call runs only after the earlier one:

- the earlier call's statement encloses the later one's path: the later one stands after it in its block, or in
  the branches of ``if`` statements that follow it there;
- or the later call is given a result that only the earlier call binds (``call_bound.py``): where it runs, that
  call ran.

Between the two, nothing binds or deletes the name, and no compound statement but ``if`` begins or ends. The later
call reads the name itself, so the earlier keep stays at its fork (``late_keeps._movable``).
"""

from __future__ import annotations

import ast

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names, data_reads, deleted_names
from codegen.lower.flow.sites import Site

__all__ = ["Kept", "kept_earlier"]

Kept = dict[tuple[str, str], ast.stmt]  # (name, tag) -> the call that kept it alive


def kept_earlier(facts: CallerFacts, kept: Kept, key: tuple[str, str], site: Site) -> bool:
    """An earlier call kept ``key``'s name alive for ``key``'s stream wherever ``site`` runs, and nothing rebound it
    since."""
    earlier = kept.get(key)
    if earlier is None or earlier is site.stmt:
        return False
    block = facts.block(site.stmt)
    if earlier in block and block.index(earlier) < block.index(site.stmt):  # one block: any call, any guard
        return not any(key[0] in bound_names(s) for s in block[block.index(earlier) + 1 : block.index(site.stmt)])
    keeper = next((s for s in facts.sites if s.stmt is earlier), None)
    if keeper is None or not _runs_after(facts, keeper, site) or key[0] not in data_reads(site.stmt):
        return False
    return _untouched(facts, key[0], _end(earlier), _at(site.stmt))


def _runs_after(facts: CallerFacts, keeper: Site, site: Site) -> bool:
    """``site`` runs only where ``keeper`` ran before it, on its stream, under its guard, neither in a loop."""
    relations, syncs = facts.relations, facts.syncs
    same = relations.covers(keeper.index, site.index) and relations.covers(site.index, keeper.index)
    same = same and facts.same_guard(syncs[keeper.index].guard_text, syncs[site.index].guard_text)
    if not same or keeper.stmt in facts.looped or site.stmt in facts.looped or _end(keeper.stmt) > _at(site.stmt):
        return False
    return _encloses(facts, keeper.stmt, site.stmt) or _given_its_result(facts, keeper, site)


def _encloses(facts: CallerFacts, earlier: ast.stmt, stmt: ast.stmt) -> bool:
    """``stmt`` stands in ``earlier``'s block after it, or in a branch of an ``if`` that does."""
    block = facts.block(earlier)
    current: ast.stmt | None = stmt
    while current is not None and facts.block(current) is not block:
        current = facts.owner(current)
        current = current if isinstance(current, ast.If) else None
    return current is not None and block.index(current) > block.index(earlier)


def _given_its_result(facts: CallerFacts, keeper: Site, site: Site) -> bool:
    """``site`` is given whole a local that only ``keeper`` binds."""
    only: dict[str, frozenset[int]] = getattr(facts.relations, "made_only_by", {})
    return any(arg.bare and only.get(arg.name or "") == frozenset({keeper.index}) for arg in site.args)


def _untouched(facts: CallerFacts, name: str, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Between two points, on any branch: nothing binds or deletes ``name``, no compound statement but ``if``."""
    for stmt in facts.blocks:
        if not (start <= _at(stmt) < end or start <= _end(stmt) < end):
            continue
        if hasattr(stmt, "body") and not isinstance(stmt, ast.If):
            return False
        deleted = deleted_names(stmt) if isinstance(stmt, ast.Delete) else set()
        if name in bound_names(stmt.test if isinstance(stmt, ast.If) else stmt) | deleted:
            return False
    return True


def _at(node: ast.stmt) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _end(node: ast.stmt) -> tuple[int, int]:
    return node.end_lineno or node.lineno, node.end_col_offset or 0
