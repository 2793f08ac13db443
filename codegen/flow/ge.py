"""GE: the fork of a planned call as one control edge, ``npu_wait_tensor(<input>, <last caller value>)``.

GE orders every cross-stream data dependency itself and plans the memory of the whole graph, so the
join and the lifetime of tensors need nothing. What data does not say is the fork: the side stream's
first op waits for the caller's prior work. One edge per call: the callee's first tensor input waits
for the value the caller made last before the call (the real engines' ``npu_wait_tensor(hidden_states,
topk_weights)``). A call with no such value before it in its block needs no edge.
"""

from __future__ import annotations

import ast

from codegen.flow.exprs import bound_names
from codegen.flow.sites import Site
from codegen.plan import CallerPlan, Cond, ForkWait

__all__ = ["fork_waits"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def fork_waits(fn: _Function, sites: list[Site]) -> CallerPlan:
    blocks = _blocks(fn)
    site_stmts = {s.stmt for s in sites}
    steps = {}
    for site in sites:
        tensor = next((a.name for a in site.args if a.bare and a.name), None)
        dependency = _last_value(blocks.get(site.stmt, []), site.stmt, site_stmts)
        if tensor is None or dependency is None or dependency == tensor or site.guard.hoist is not None:
            continue
        when = Cond.of(site.guard.expr) if site.guard.dynamic else None
        steps[("before", site.stmt, "")] = (ForkWait(tensor=tensor, dependency=dependency, when=when),)
    return CallerPlan(steps=steps)


def _blocks(fn: _Function) -> dict[ast.stmt, list[ast.stmt]]:
    """Each statement's block (the list it stands in)."""
    found: dict[ast.stmt, list[ast.stmt]] = {}
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                found.update({stmt: block for stmt in block if isinstance(stmt, ast.stmt)})
    return found


def _last_value(block: list[ast.stmt], stmt: ast.stmt, site_stmts: set[ast.stmt]) -> str | None:
    """The last name a plain assignment before ``stmt`` in its block binds (not a stream call's result)."""
    for earlier in reversed(block[:block.index(stmt)]):
        if earlier in site_stmts or not isinstance(earlier, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            continue
        targets = earlier.targets if isinstance(earlier, ast.Assign) else [earlier.target]
        names = [n for t in targets for n in _ordered_names(t)]
        if names:
            return names[-1]
    return None


def _ordered_names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)] if bound_names(target) else []
