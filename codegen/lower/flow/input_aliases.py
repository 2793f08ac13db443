"""Names of one caller that may hold views of one tensor: a write through one is a write to the others.

``v = q[0]`` then ``v.add_(1)`` writes ``q``'s memory: a call on another stream still reading ``q`` must be joined
first, and a call that reads ``q`` must come after it. The caller's views and reference copies (``transfer.aliasing``:
``a = b``, ``a = b[0]``, ``a = b.squeeze(-1)``) are grouped once per function, whatever the path or order (the
groups can only make more joins, never fewer), and a call's inputs widened to their groups. So are the names bound
to a call's result that is one of its arguments as it came (``c = x.mul_(2)``, ``c = torch_npu.npu_silu_(x)``:
``result_aliases.py``), given as ``results``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.index.walked import walked_of
from codegen.lower.flow.aliasing import aliasing

__all__ = ["alias_groups", "widened"]


def alias_groups(
    fn: ast.AST, results: Iterable[tuple[frozenset[str], frozenset[str]]] = ()
) -> dict[str, frozenset[str]]:
    """{name: every name that may share its memory} for the names the caller binds as views of others."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.get(name, name) != name:
            name = parent[name]
        return name

    bound = [(found[0], found[1]) for stmt in walked_of(fn, ast.Assign) if (found := aliasing(stmt))]
    for targets, sources in [*bound, *results]:
        names = sorted(targets) + sorted(sources)
        for name in names:  # ``a, b = c, d`` groups all four: more joins at worst
            parent[root(name)] = root(names[-1])
    groups: dict[str, set[str]] = {}
    for name in parent:
        groups.setdefault(root(name), set()).add(name)
    return {name: frozenset(group) for group in groups.values() for name in group}


def widened(inputs: frozenset[str], groups: dict[str, frozenset[str]]) -> frozenset[str]:
    return inputs.union(*(groups.get(name, frozenset()) for name in inputs))
