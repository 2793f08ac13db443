"""GE: the fork of a planned call as one control edge, ``npu_wait_tensor(<input>, <last caller value>)``.

GE orders every cross-stream data dependency itself and plans the memory of the whole graph, so the
join and the lifetime of tensors need nothing. What data does not say is the fork: the side stream's
first op waits for the caller's prior work. One edge per call: the callee's first tensor input waits
for the tensor the caller made last before the call (the real engines' ``npu_wait_tensor(hidden_states,
topk_weights)``). Both ends must certainly be tensors (``tensors.py``): a call with no such pair in its
block gets no edge, and GE still orders it by its data.
"""

from __future__ import annotations

import ast

from codegen.flow.arguments import Argument
from codegen.flow.sites import Site
from codegen.flow.tensors import Returns, certain_tensors
from codegen.plan import CallerPlan, Cond, ForkWait
from codegen.signature import Tensorness

__all__ = ["fork_waits"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def fork_waits(fn: _Function, sites: list[Site], *, method: bool, returns: Returns) -> CallerPlan:
    blocks = _blocks(fn)
    made = certain_tensors(fn, method=method, returns=returns)
    site_stmts = {s.stmt for s in sites}
    steps = {}
    for site in sites:
        tensor = next((a.name for a in site.args if a.bare and a.name and _certain(a, made)), None)
        dependency = _last_tensor(blocks.get(site.stmt, []), site.stmt, site_stmts, made)
        if tensor is None or dependency is None or dependency == tensor or site.guard.hoist is not None:
            continue
        when = Cond.of(site.guard.expr) if site.guard.dynamic else None
        steps[("before", site.stmt, "")] = (ForkWait(tensor=tensor, dependency=dependency, when=when),)
    return CallerPlan(steps=steps)


def _certain(argument: Argument, made: dict[ast.stmt, str]) -> bool:
    """The argument is a tensor: the callee says so, or the caller made it (the ``tensors.py`` rules)."""
    return argument.tensor is Tensorness.TENSOR or argument.name in made.values()


def _blocks(fn: _Function) -> dict[ast.stmt, list[ast.stmt]]:
    """Each statement's block (the list it stands in)."""
    found: dict[ast.stmt, list[ast.stmt]] = {}
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                found.update({stmt: block for stmt in block if isinstance(stmt, ast.stmt)})
    return found


def _last_tensor(block: list[ast.stmt], stmt: ast.stmt, site_stmts: set[ast.stmt],
                 made: dict[ast.stmt, str]) -> str | None:
    """The tensor the last assignment before ``stmt`` in its block that makes one binds (not a stream call's)."""
    for earlier in reversed(block[:block.index(stmt)]):
        if earlier not in site_stmts and earlier in made:
            return made[earlier]
    return None
