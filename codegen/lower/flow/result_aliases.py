"""Names a statement binds to the memory of an argument that a call returns as it came.

``c = x.mul_(2)`` (an ATen op writing ``self`` returns it), ``c = torch.relu_(x)``, ``c =
torch_npu.npu_scatter_nd_update_(x, i, u)`` (its schema's ``-> Tensor(a!)``) and ``k, ckv, kr, ckv_out =
torch_npu.npu_kv_rmsnorm_rope_cache(..., k_cache, ckv_cache)`` (its kernel returns the two caches as they came:
``foreign_writes.foreign_results``) bind names that are the argument: a later write in place through ``c`` writes
``x``, and a call on another stream reading ``c`` reads ``x``. The planner groups such names with what the argument
may hold (``input_aliases.py``), as it groups views: more joins at worst, never fewer. A tuple unpacked from the
call pairs each name with its own element; any other target holds every argument the result may be. The function
an op's name stands for is read through the module's imports (``import torch_npu as tnpu``, ``from torch_npu import
npu_silu_``).
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.foreign_writes import Results, foreign_results
from codegen.lower.flow.imports import module_bindings
from codegen.lower.flow.schema import writes_self
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["Pairs", "result_aliases"]

Pairs = list[tuple[frozenset[str], frozenset[str]]]  # (names bound, names whose memory they may be)
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def result_aliases(fn: _Function, tree: ast.Module) -> Pairs:
    """Each binding of ``fn`` (``tree``'s function) to a call's result that may be one of its arguments."""
    imported = {
        local: (*b.module.split("."), *([b.name] if b.name else [])) for local, b in module_bindings(tree, "").items()
    }
    found: Pairs = []
    for stmt in walked_of(fn, ast.Assign):
        results = _results(stmt.value, imported) if isinstance(stmt.value, ast.Call) else []
        for target in stmt.targets if results else []:
            found += _paired(target, results)
    return [(names, held) for names, held in found if names and held]


def _results(call: ast.Call, imported: dict[str, tuple[str, ...]]) -> Results:
    """The arguments ``call``'s result may be: ``x`` of ``x.add_(1)``, else what the function it names returns."""
    func = call.func
    if isinstance(func, ast.Attribute) and _dotted(func.value, imported) is None and writes_self(func.attr):
        return [(None, func.value)]
    dotted = _dotted(func, imported)
    return foreign_results(call, dotted) if dotted else []


def _dotted(node: ast.expr, imported: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """``tnpu.npu_silu_`` -> ``("torch_npu", "npu_silu_")``, through the module's imports; None for a chain that
    starts at no imported name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in imported:
        return None
    return (*imported[node.id], *reversed(parts))


def _paired(target: ast.expr, results: Results) -> Pairs:
    """Each name of ``target`` with the arguments its part of the result may be."""
    whole = frozenset().union(*(alias_sources(arg) for _, arg in results))
    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else []
    if not elements or any(at is None for at, _ in results) or any(isinstance(e, ast.Starred) for e in elements):
        return [(bound_names(target), whole)]
    return [
        (bound_names(element), frozenset().union(*(alias_sources(arg) for where, arg in results if where == at)))
        for at, element in enumerate(elements)
    ]
