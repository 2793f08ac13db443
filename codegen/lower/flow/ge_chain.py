"""GE: calls that run one right after another on one stream under one guard, a chain sharing the first's fork.

Between two calls of a chain only views of what the chain made may stand (``scale = scale.squeeze(-1)``: no
kernel, nothing the caller's stream runs); they go inside the stream's block with the calls. A call that leads
a chain keeps its fork (the next may need it), and a call after the chain's first fork, on a stream of the chain
or reading one of its results, needs no fork of its own (``ge.py`` reads these).
"""

from __future__ import annotations

import ast
from collections.abc import Set

from codegen.lower.flow.aliasing import views_of
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.ge_own import same_guard
from codegen.lower.flow.sites import Site

__all__ = ["bare_inputs", "chain_glue", "chain_made", "leads_chain", "ordered_by_chain"]


def leads_chain(site: Site, ordered: list[Site], blocks: dict) -> bool:
    """The next call runs on its stream right after it (views between): they share its fork, which the next may
    need, so this one keeps it (one block, not two)."""
    later = ordered[ordered.index(site) + 1 :]
    if not later or later[0].tag != site.tag or not same_guard(site, later[0]):
        return False
    return chain_glue(blocks.get(site.stmt, []), site.stmt, later[0].stmt, bound_names(site.stmt)) is not None


def ordered_by_chain(site: Site, chain: list[Site]) -> bool:
    """Nothing runs on the caller's stream since the first call of ``chain`` forked: a call on a stream of the
    chain follows that stream's fork, and one that reads a result of the chain follows its producer."""
    return any(e.tag == site.tag for e in chain) or bool(bare_inputs(site) & chain_made(chain))


def chain_made(chain: list[Site]) -> set[str]:
    """The names the chain's calls bind."""
    return {name for earlier in chain for name in bound_names(earlier.stmt)}


def chain_glue(block: list[ast.stmt], earlier: ast.stmt, stmt: ast.stmt, made: Set[str]) -> list[ast.stmt] | None:
    """The statements between two calls of a chain, when each only takes views of what the chain made (``scale =
    scale.squeeze(-1)``: no kernel, nothing the caller's stream runs); None when anything else stands between."""
    if earlier not in block or stmt not in block or block.index(stmt) <= block.index(earlier):
        return None
    between = block[block.index(earlier) + 1 : block.index(stmt)]
    for glue in between:
        if not views_of(glue, made):
            return None
        made = made | bound_names(glue)
    return between


def bare_inputs(site: Site) -> set[str]:
    """The names passed to the call whole."""
    return {a.name for a in site.args if a.bare and a.name}
