"""Names of one function that may share memory, read per binding: a name bound twice holds two values.

``c = x.view(-1)``, later ``c = y.view(-1)``: ``c`` may be ``x``'s memory or ``y``'s, yet ``x`` and ``y`` share
none. A union of every name a binding links (``input_aliases.py``) tied ``x`` to ``y`` through ``c``, and the
results of two calls the run cannot read given one flag (``a = ext.f(x, flag)``, ``b = ext.f(w, flag)``) tied ``x``
to ``w`` through ``flag``: a side call reading ``w`` was joined before the caller wrote ``x``. Here each binding of a
name is a node pointing to every binding of the names whose memory it may be (a view or reference copy:
``aliasing.py``; a call's result that may be an argument: ``result_aliases.py``); two names may share memory where
a binding of one and a binding of the other reach a common node. A name read anywhere stands for each of its
bindings, whatever the order or path, so the answer holds at every point of the function: the union's pairs less
those it linked only through a rebound name or a shared argument, never a pair that may share memory.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.index.walked import walked_of
from codegen.lower.flow.aliasing import alias_groups

__all__ = ["Binding", "binding_groups"]

Binding = tuple[ast.stmt, frozenset[str], frozenset[str]]  # (the statement, names it binds, memory they may be)
_Node = tuple[str, int]  # a name and the statement binding it (0: every other binding, its value on entry too)


def binding_groups(fn: ast.AST, results: Iterable[Binding] = ()) -> dict[str, frozenset[str]]:
    """{name: every name that may share its memory} for the names ``fn`` binds as views, reference copies or
    results of ``results`` (and the names they may be)."""
    links = _links(fn, results)
    if not links:
        return {}
    nodes: dict[str, set[_Node]] = {}
    for node, sources in links.items():
        nodes.setdefault(node[0], {(node[0], 0)}).add(node)
        for name in sources:
            nodes.setdefault(name, {(name, 0)})
    owners: dict[_Node, set[str]] = {}  # a binding -> the names one of whose bindings may be its memory
    memory: dict[str, set[_Node]] = {}
    for name, own in nodes.items():
        held = memory[name] = set().union(*(_reached(node, links, nodes) for node in own))
        for node in held:
            owners.setdefault(node, set()).add(name)
    return {name: frozenset().union(*(owners[node] for node in held)) for name, held in memory.items()}


def _links(fn: ast.AST, results: Iterable[Binding]) -> dict[_Node, frozenset[str]]:
    """Each binding -> the names whose memory it may be."""
    links: dict[_Node, frozenset[str]] = {}
    bound = [(stmt, *pair) for stmt in walked_of(fn, ast.Assign) for pair in alias_groups(stmt)]
    for stmt, targets, sources in [*bound, *results]:
        for name in targets:
            key = (name, id(stmt))
            links[key] = links.get(key, frozenset()) | sources
    return links


def _reached(start: _Node, links: dict[_Node, frozenset[str]], nodes: dict[str, set[_Node]]) -> frozenset[_Node]:
    """The bindings whose memory ``start``'s value may be: itself, and on through what each of them may be."""
    seen, left = {start}, [start]
    while left:
        for name in links.get(left.pop(), frozenset()):
            fresh = nodes[name] - seen
            seen |= fresh
            left.extend(fresh)
    return frozenset(seen)
