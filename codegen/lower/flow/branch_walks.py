"""An ``if`` with its ``elif`` chain, and a ``match``, walked branch by branch: the state after merges the branches.

Every test of an ``if`` chain (a ``match``'s subject and guards) is read before the first branch starts, so the calls
whose results they read are joined before the statement. Each branch starts from the state narrowed by what its test
fixes (``fixed_tests.py``); an ``if`` known false in a loop's last iteration walks its ``else`` only
(``last_iteration.py``); a ``match`` whose last case catches everything has no path past its cases.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow.compound_binds import unbound
from codegen.lower.flow.exprs import data_reads
from codegen.lower.flow.state import State, merge

if TYPE_CHECKING:
    from codegen.lower.flow.analyze import Walk

__all__ = ["walk_if", "walk_match"]


def walk_if(walk: Walk, stmt: ast.If, state: State) -> State | None:
    """An ``if`` with its ``elif`` chain: every test of the chain is joined before the first ``if`` (no
    plain statement runs between the tests, so the pending calls are the same at each)."""
    chain = [stmt]
    while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
        chain.append(chain[-1].orelse[0])
    state = walk.join_reads(stmt, state, set().union(*(data_reads(link.test) for link in chain)))
    state = walk.early_joins(stmt, walk.ahead.due(stmt, state), state)
    if walk.last.tests.get(stmt) in walk.lasting:  # false in this last iteration (``last_iteration.py``)
        return walk.block(stmt.orelse, state)
    known = walk.fixed.branches(chain)
    outs = [walk.block(link.body, walk.fixed.narrowed(state, k)) for link, k in zip(chain, known)]
    return merge(*outs, walk.block(chain[-1].orelse, walk.fixed.narrowed(state, known[-1])))


def walk_match(walk: Walk, stmt: ast.Match, state: State) -> State | None:
    """A ``match``: its subject and guards are joined before it; no path passes a last case that catches all."""
    reads = data_reads(stmt.subject).union(*(data_reads(c.guard) for c in stmt.cases if c.guard))
    state = walk.join_reads(stmt, state, reads)
    outs = [walk.block(case.body, unbound(state, [case.pattern])) for case in stmt.cases]
    exhaustive = (
        stmt.cases
        and isinstance(stmt.cases[-1].pattern, ast.MatchAs)
        and stmt.cases[-1].pattern.pattern is None
        and stmt.cases[-1].guard is None
    )
    return merge(*outs, None if exhaustive else state)
