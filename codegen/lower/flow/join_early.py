"""Where a call is joined before a later call of its own stream that stays on the caller's stream, to spare a keep.

A call joined by the very next statement stays on the caller's stream (``planner.py``). When it was decorated for
the stream of an earlier call S (under S's guard), the user's schedule runs it on that stream after S, and its
reader, the next statement, waits for it and so for S. Joining S just before it (instead of at S's first reader,
further on) then takes no overlap the decorators asked for; where it is the last reader of some of S's inputs,
the caller holds those inputs past S's join, and they need no ``record_stream`` (``keep_alive.py``). torchair's
MLA: after ``nope_cache, pe_cache = self.kv_rmsnorm_rope_cache(kv, cos, sin, kv_cache, slots)``, ``q_pe =
self.rope_single(q_pe, cos, sin)`` (on "mla_secondary", run where it is called: the attention reads it next) is
the last reader of ``cos`` and ``sin``: the caller waits for the KV work before it, and keeps neither alive.

S moves only when its one step is a join before a statement of its own block, not split (``split.py``), that
every statement from S surely reaches (no compound statement, nothing leaving); the later call is not split
either, some statement between S and it runs an op (else S would overlap nothing), and it reads an input of S
that nothing rebinds since S and no statement from S's old join on reads.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.lower.flow.analyze import Analysis, Anchor
from codegen.lower.flow.exprs import bound_names, data_reads, leaves, runs_op
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import COMPOUND
from codegen.lower.flow.transfer import Join

__all__ = ["join_before_stayed"]


def join_before_stayed(
    sites: list[Site],
    stayed: list[tuple[Site, str | None]],
    keys: list[str | None],
    result: Analysis,
    blocks: Mapping[ast.stmt, list[ast.stmt]],
) -> None:
    """Move the join of each call of ``sites`` (``keys``: their guards' keys) before the first call of
    ``stayed`` (each with its guard's key) that qualifies; ``result`` changes in place."""
    for site in sites:
        key = keys[site.index]
        found = _single_join(site, result, blocks)
        if found is None or (key is not None and key.startswith("<call")):
            continue  # a guard read anew at each call: no other call surely shares it
        anchor, step, between, rest = found
        later = {other.stmt for other, other_key in stayed if other.tag == site.tag and other_key == key}
        early = next((s for s in between if s in later and _spares(site, s, between, rest, result)), None)
        if early is not None:
            result.steps[anchor].remove(step)
            result.steps.setdefault(("before", early, ""), []).append(step)


def _single_join(
    site: Site, result: Analysis, blocks: Mapping[ast.stmt, list[ast.stmt]]
) -> tuple[Anchor, Join, list[ast.stmt], list[ast.stmt]] | None:
    """The call's only step, a join before a later statement of its block (not split) that every statement
    from the call surely reaches; with the statements in between and those from the join on."""
    placed = [(anchor, step) for anchor, found in result.steps.items() for step in found if step.site == site.index]
    anchor, step = placed[0] if len(placed) == 1 else (None, None)
    if anchor is None or not isinstance(step, Join) or anchor[0] != "before":
        return None
    block, join = blocks.get(site.stmt, [site.stmt]), anchor[1]
    if not isinstance(join, ast.stmt) or join not in block or block.index(join) <= block.index(site.stmt):
        return None
    between = block[block.index(site.stmt) + 1 : block.index(join)]
    if join in result.splits or any(isinstance(s, COMPOUND) or leaves(s) for s in between):
        return None
    return anchor, step, between, block[block.index(join) :]


def _spares(site: Site, early: ast.stmt, between: list[ast.stmt], rest: list[ast.stmt], result: Analysis) -> bool:
    """Some statement before ``early`` runs an op (the call still overlaps it), ``early`` is not split, and it
    reads an input ``site`` hands over whole that nothing rebinds before it and ``rest`` (the statements from
    the old join on) never reads."""
    since = between[: between.index(early)]
    if early in result.splits or not any(runs_op(s) for s in since):
        return False
    inputs = {a.name for a in site.args if a.bare and a.name} - set().union(*(bound_names(s) for s in since))
    later = set().union(*(data_reads(s) for s in rest))
    return bool((inputs & data_reads(early)) - later)
