"""Which calls record a join event of their own: a later call of one callee whose result the caller reads after
an earlier one's.

Calls of one callee share its join event (``<edge>.join``). When two of them follow each other in a block and
the caller then reads the first one's result before the second one's (``cann_r1_microbatch``: micro-batch 0's
combine, then micro-batch 1's, then micro-batch 0's result read, micro-batch 1's only in the next layer), the
second call's record replaces the first's: the wait for the first result waits for the second call as well,
and the second overlaps nothing the caller does until then. Such a later call records a join of its own
(``<edge>.join.2``, ...), which the reads of its results wait for: one more record and wait than one event
would take, for the overlap. Calls whose results are read together (or the first's before the second call)
keep sharing the callee's event, as do calls in different blocks (the two branches of an ``if``: one of them
runs); a call repeated by a loop is one call here (its event is recorded again each time, as before).
"""

from __future__ import annotations

import ast

from codegen.lower.flow.exprs import loaded_names
from codegen.lower.flow.sites import Site
from codegen.lower.flow.statements import statement_blocks

__all__ = ["own_joins"]


def own_joins(fn: ast.FunctionDef | ast.AsyncFunctionDef, sites: list[Site]) -> dict[int, int]:
    """``site.index`` -> the number of its own join event (2, 3, ...) for each call whose result the caller reads
    after that of the call of the same callee before it in its block; calls not listed record the callee's."""
    blocks = statement_blocks(fn)
    last: dict[tuple[str, int], Site] = {}
    count: dict[tuple[str, int], int] = {}
    found: dict[int, int] = {}
    for site in sorted(sites, key=lambda s: s.index):
        block = blocks.get(site.stmt)
        where = (site.callee.key, id(block))  # type: ignore[attr-defined]
        earlier = last.get(where)
        if earlier is not None and block is not None and _read_first(block, site, earlier):
            count[where] = count.get(where, 1) + 1
            found[site.index] = count[where]
        last[where] = site
    return found


def _read_first(block: list[ast.stmt], later: Site, earlier: Site) -> bool:
    """After ``later``'s statement, the block reads ``earlier``'s result before ``later``'s (or only it)."""
    for stmt in block[block.index(later.stmt) + 1 :]:
        read = loaded_names(stmt)
        if read & later.names:
            return False
        if read & earlier.names:
            return True
    return False
