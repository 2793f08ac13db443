"""Reads of this micro-batch's item in a slotted call's loop, up to the call, touch no earlier iteration's call.

vllm_qwen3_dbo's dispatch loop fills micro-batch ``i``'s dispatcher and reads its gating results
(``token_dispatchers[i].preprocess_and_permtute1(dispatched_input[i], ...)``) while micro-batch ``i - 1``'s
dispatch may still run on the communication stream. That call stored its results into ``dispatched_input[i - 1]``
and ``tokens_per_expert[i - 1]`` and wrote the state of ``token_dispatchers[i - 1]``; the analysis reads names, not
indices, so it joined the dispatch before the next micro-batch's work, and the two dispatches never overlapped.

For a slotted call (``slot_loops.py``: directly in the body of ``for i in range(n)``, its callee's only call in the
function, storing its results only as ``xs[i]``), a statement of its loop up to the call itself sees only the calls
of earlier iterations pending, each made at another value of ``i``. What it names only as ``c[i]`` is apart from
them when every mention of ``c`` in the loop body is ``c[i]`` and

- ``c`` holds the call's results (``xs[i] = ...``) and the call writes nothing of ``c``: item ``i`` holds what was
  stored before the loop or in this iteration, never an earlier call's result (storing that would read ``c`` at
  another index, or a name holding the result, and join it there); or
- ``c`` is a list of distinct objects (``distinct_items.py``): item ``i`` is another object than the item each
  earlier call read or changed, so a write through it, too, touches none of theirs.

Such a read neither joins those calls nor, with two of them pending, ties a micro-batch to the other's.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import attrs

from codegen.index.scan import dotted_name
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.body_reads import callee_reads
from codegen.lower.flow.item_slots import SlotLoop, Slots
from codegen.lower.flow.paths_meet import meets
from codegen.lower.flow.sites import Site

__all__ = ["apart_items"]

_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def apart_items(slots: Slots, sites: Sequence[Site], distinct: frozenset[str]) -> Slots:
    """``slots`` with, for each slotted call, the statements of its loop up to it that read items apart;
    ``distinct``: the caller's lists of distinct objects."""
    apart: dict[ast.stmt, dict[int, frozenset[str]]] = {}
    for site in sites:
        slot = slots.sites.get(site.index)
        found = _apart_containers(slot, site, distinct) if slot is not None else frozenset()
        for stmt in _up_to_call(slot) if slot is not None and found else ():
            apart.setdefault(stmt, {})[site.index] = found
    return attrs.evolve(slots, apart=apart, distinct=distinct)


def _apart_containers(slot: SlotLoop, site: Site, distinct: frozenset[str]) -> frozenset[str]:
    """The containers the loop names only as ``c[var]`` that hold the call's results, unwritten, or distinct
    objects."""
    results = slot.items - site.writes
    return frozenset(c for c in results | distinct if _only_at(slot.loop, c, slot.var) and not _reached(site, c))


def _reached(site: Site, chain: str) -> bool:
    """The callee's body may reach the list attribute ``chain`` (``self.ds``) through its own object: an item it
    reads there may be the one this iteration changes (a local list is reached only through the call's arguments).
    Its reads are paths (``body_reads.callee_reads``: ``sub.k`` does not reach ``self.sub.ds``), its writes first
    attributes."""
    receiver = site.call.resolved.receiver
    body = callee_reads(site.callee) | site.callee.writes_state  # type: ignore[attr-defined]
    if "." not in chain or not receiver or not body:
        return False
    if "*" in body or "." in receiver:
        return chain.startswith(f"{receiver}.")
    return chain.startswith(f"{receiver}.") and any(meets(chain[len(receiver) + 1 :], p) for p in body)


def _only_at(loop: ast.For, name: str, var: str) -> bool:
    """Every mention of ``name`` in the loop's body is the item ``name[var]``, in the loop's own scope (in a
    lambda, a nested function or a comprehension, ``var`` may name another value)."""
    at = {
        id(n.value)
        for stmt in loop.body
        for n in walked_of(stmt, ast.Subscript)
        if isinstance(n.slice, ast.Name) and n.slice.id == var
    }
    nested = {id(n) for stmt in loop.body for scope in walked_of(stmt, _SCOPES) for n in walked(scope)}
    if "." in name:  # a list attribute read without a local (``self.sub.ds[i]``: ``distinct_items.py``)
        chains = [n for stmt in loop.body for n in walked_of(stmt, ast.Attribute) if dotted_name(n) == name]
        return all(id(n) in at and id(n) not in nested for n in chains)
    mentions = [n for stmt in loop.body for n in walked_of(stmt, ast.Name) if n.id == name]
    return all(id(n) in at and id(n) not in nested for n in mentions)


def _up_to_call(slot: SlotLoop) -> list[ast.stmt]:
    """The statements of the loop's body that run before the call in an iteration, and the call's."""
    found = [s for s in walked(slot.loop) if isinstance(s, ast.stmt) and s is not slot.loop]
    return [s for s in found if s.lineno < slot.stmt.lineno or s is slot.stmt]
