"""Where a call is joined before a later call of its own stream that stays on the caller's stream, to spare a keep.

A call joined by the very next statement stays on the caller's stream (``planner.py``). When it was decorated for
the stream of an earlier call S, the user's schedule runs it on that stream after S: the caller's stream could
not run it before S's work was done. Joining S just before it (instead of at S's first reader, further on) then
takes no overlap the decorators asked for, and where it is the last reader of some of S's inputs, the caller
holds those inputs past S's join: they need no ``record_stream`` (``keep_alive.py``). torchair's MLA:
``nope_cache, pe_cache = self.kv_rmsnorm_rope_cache(kv, cos, sin, kv_cache, slots)``, then ``q_pe =
self.rope_single(q_pe, cos, sin)`` on "mla_secondary" (run where it is called: the next statement reads it) is the
last reader of ``cos`` and ``sin``: the caller waits for the KV work before it, not before the attention, and
keeps neither alive.

S moves only when it has one join (no relay), before a statement of its own block whose first operand is not
split off (``split.py``), and every statement from S to there surely runs (no compound statement, nothing
leaving); the later call has S's guard and is not S's next
statement (S would overlap nothing); it reads an input of S that nothing rebinds since S and no statement from
S's old join on reads.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.lower.flow.analyze import Analysis
from codegen.lower.flow.exprs import bound_names, data_reads, leaves
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
        placed = [(anchor, step) for anchor, found in result.steps.items() for step in found if step.site == site.index]
        if len(placed) != 1 or not isinstance(placed[0][1], Join) or placed[0][0][0] != "before":
            continue
        anchor, step = placed[0]
        block = blocks.get(site.stmt, [site.stmt])
        join = anchor[1]
        if not isinstance(join, ast.stmt) or join not in block or block.index(join) <= block.index(site.stmt):
            continue
        if join in result.splits:
            continue  # its first operand runs before the wait (``split.py``)
        between = block[block.index(site.stmt) + 1 : block.index(join)]
        if any(isinstance(s, COMPOUND) or leaves(s) for s in between):
            continue
        key = keys[site.index]
        if key is not None and key.startswith("<call"):
            continue  # a guard read anew at each call: no other call surely shares it
        later = {other.stmt for other, found in stayed if other.tag == site.tag and found == key}
        rest = block[block.index(join) :]
        early = next(
            (s for s in between[1:] if s in later and s not in result.splits and _spares(site, s, between, rest)), None
        )
        if early is not None:
            result.steps[anchor].remove(step)
            result.steps.setdefault(("before", early, ""), []).append(step)


def _spares(site: Site, early: ast.stmt, between: list[ast.stmt], rest: list[ast.stmt]) -> bool:
    """``early`` reads an input ``site`` hands over whole that nothing rebinds before it and ``rest`` (the
    statements from the old join on) never reads."""
    since = between[: between.index(early)]
    inputs = {a.name for a in site.args if a.bare and a.name} - set().union(*(bound_names(s) for s in since))
    later = set().union(*(data_reads(s) for s in rest))
    return bool((inputs & data_reads(early)) - later)
