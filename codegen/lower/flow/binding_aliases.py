"""Names of one function that may share memory, read per binding: a name bound twice holds two values.

``c = x.view(-1)``, later ``c = y.view(-1)``: ``c`` may be ``x``'s memory or ``y``'s, yet ``x`` and ``y`` share
none. A union of every name a binding links (the grouping this replaced) tied ``x`` to ``y`` through ``c``, and the
results of two calls the run cannot read given one flag (``a = ext.f(x, flag)``, ``b = ext.f(w, flag)``) tied ``x``
to ``w`` through ``flag``: a side call reading ``w`` was joined before the caller wrote ``x``. Here each binding of a
name is a node pointing to every binding of the names whose memory it may be (a view or reference copy:
``aliasing.py``; a call's result that may be an argument: ``result_aliases.py``; a loop's or comprehension's target,
what its iterable holds: ``for c in xs``); a container holds what is stored into an item of it or taken in
(``out[0] = a``, ``out.append(a)``), which the union left out: ``c.add_(1)`` in the loop, or ``a.add_(1)`` after
``r = self.side(out)``, ran before the side call's join, a race. A new container of another's items holds them too
(``ys = xs + zs`` where one is a container, ``ys += xs``: ``containers``; ``list(xs)``, ``xs.copy()``, ``xs + [b]``:
``value_views.copied``, read in ``result_aliases.py``). Two names may share memory where a binding of one and a
binding of the other reach a common node. A name read anywhere stands for each of its bindings, whatever the
order or path, so the answer holds at every point of the function: never fewer pairs than may share memory.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from codegen.index.walked import walked_of
from codegen.lower.flow.aliasing import alias_groups
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.summed_containers import maybe_containers, reference_copies, summed
from codegen.lower.flow.value_views import DISPLAYS, copied, joined, operands
from codegen.lower.flow.view_roots import TAKES_IN, alias_root, alias_sources

__all__ = ["Binding", "binding_groups", "containers", "iterated", "linked_bindings", "loops", "widened"]

Binding = tuple[ast.AST, frozenset[str], frozenset[str]]  # (the binding node, names it binds, memory they may be)
_Node = tuple[str, int]  # a name and the statement binding it (0: every other binding, its value on entry too)
_Loop = ast.For | ast.AsyncFor | ast.comprehension
_PASSING = frozenset({"enumerate", "zip", "reversed", "list", "tuple", "iter"})  # iterate their arguments' items


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


def linked_bindings(fn: ast.AST, results: Iterable[Binding] = ()) -> frozenset[tuple[str, int]]:
    """``(name, id(statement))`` of each binding of ``fn`` that may be some name's memory (``fresh_bindings.py``)."""
    return frozenset(_links(fn, results))


def _links(fn: ast.AST, results: Iterable[Binding]) -> dict[_Node, frozenset[str]]:
    """Each binding -> the names whose memory it may be."""
    links: dict[_Node, frozenset[str]] = {}
    bound = [(stmt, *pair) for stmt in walked_of(fn, ast.Assign) for pair in alias_groups(stmt)]
    for stmt, targets, sources in [*bound, *results, *_elements(fn), *_stores(fn), *_concatenated(fn)]:
        for name in targets:
            key = (name, id(stmt) if stmt is not None else 0)
            links[key] = links.get(key, frozenset()) | sources
    return links


def _elements(fn: ast.AST) -> Iterator[tuple[ast.AST, frozenset[str], frozenset[str]]]:
    """A loop's or comprehension's target holds what its iterable may hold (``for c in xs``, ``for i, c in
    enumerate(xs)``, ``for c in (a, b)``)."""
    for node in loops(fn):
        yield node, bound_names(node.target), frozenset().union(*(alias_sources(v) for v in iterated(node)))


def loops(fn: ast.AST) -> list[_Loop]:
    """The loops and comprehensions of ``fn``: each binds its target to the items of what it iterates."""
    return [*walked_of(fn, ast.For), *walked_of(fn, ast.AsyncFor), *walked_of(fn, ast.comprehension)]


def iterated(node: _Loop) -> list[ast.expr]:
    """The values whose items ``node``'s target takes: its iterable, or what ``enumerate``, ``zip``, ... pass on."""
    value = node.iter
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _PASSING:
        return list(value.args)
    return [value]


def _stores(fn: ast.AST) -> Iterator[tuple[None, frozenset[str], frozenset[str]]]:
    """A container holds what is stored into an item of it (``out[0] = a``) or handed to its ``append``, ``extend``,
    ... (``out.append(a)``), an object what is stored into its attribute (``self.held = a``: ``self`` holds ``a``, a
    write through ``self.held`` writes it): whatever it is bound to (no binding of its own)."""
    for stmt in walked_of(fn, ast.Assign):
        for item in (n for t in stmt.targets for n in ast.walk(t) if isinstance(n, (ast.Subscript, ast.Attribute))):
            if isinstance(item.ctx, ast.Store) and (root := alias_root(item)):
                yield None, frozenset({root}), alias_sources(stmt.value)
    for call in walked_of(fn, ast.Call):
        if isinstance(call.func, ast.Attribute) and call.func.attr in TAKES_IN and (root := alias_root(call.func)):
            yield None, frozenset({root}), frozenset().union(*(alias_sources(a) for a in call.args))


def _concatenated(fn: ast.AST) -> Iterator[tuple[ast.AST | None, frozenset[str], frozenset[str]]]:
    """``ys = xs + zs`` where one is a container (``containers``) holds what both hold; ``ys += xs`` adds what
    ``xs`` holds to whatever ``ys`` is bound to (no binding of its own), and to each name ``ys`` is a reference copy
    of (``ys = ws``: the same list, ``summed_containers.reference_copies``)."""
    held = containers(walked_of(fn, ast.Assign))
    copies = reference_copies(fn)
    maybe = maybe_containers(fn) | held
    maybe |= {name for name, copied in copies.items() if copied & maybe}  # ``ys = xs`` of a list given
    for stmt in walked_of(fn, ast.Assign):
        value = stmt.value
        if joined(value):
            parts = operands(value)
            if any(isinstance(p, ast.Name) and p.id in held for p in parts) or summed(value, maybe):
                yield stmt, frozenset().union(*(bound_names(t) for t in stmt.targets)), _sources_of(parts)
    for aug in walked_of(fn, ast.AugAssign):
        if not (isinstance(aug.target, ast.Name) and isinstance(aug.op, (ast.Add, ast.Mult))):
            continue
        if aug.target.id in held or summed(ast.BinOp(aug.target, aug.op, aug.value), maybe):
            extended = frozenset({aug.target.id}) | copies.get(aug.target.id, frozenset())  # the list ``ys = xs`` is
            yield None, extended, alias_sources(aug.value)


def containers(stmts: Iterable[ast.stmt]) -> frozenset[str]:
    """The names ``stmts`` bind to a container somewhere: a display, a comprehension, a copy (``list(xs)``,
    ``value_views.copied``), a concatenation with one."""
    found: set[str] = set()
    assigns = [s for s in stmts if isinstance(s, ast.Assign)]
    assigned = [(s.targets[0].id, s.value) for s in assigns if isinstance(s.targets[0], ast.Name)]
    while fresh := {name for name, value in assigned if name not in found and _container(value, found)}:
        found |= fresh
    return frozenset(found)


def _container(value: ast.expr, found: set[str]) -> bool:
    if isinstance(value, DISPLAYS) or copied(value) is not None:
        return True
    if joined(value):
        return any(isinstance(p, ast.Name) and p.id in found for p in (value.left, value.right))
    return isinstance(value, ast.Name) and value.id in found


def _sources_of(values: list[ast.expr]) -> frozenset[str]:
    """The names whose memory one of ``values`` may be or hold."""
    return frozenset().union(*(alias_sources(v) for v in values))


def _reached(start: _Node, links: dict[_Node, frozenset[str]], nodes: dict[str, set[_Node]]) -> frozenset[_Node]:
    """The bindings whose memory ``start``'s value may be: itself, and on through what each of them may be."""
    seen, left = {start}, [start]
    while left:
        for name in links.get(left.pop(), frozenset()):
            fresh = nodes[name] - seen
            seen |= fresh
            left.extend(fresh)
    return frozenset(seen)


def widened(inputs: frozenset[str], groups: dict[str, frozenset[str]]) -> frozenset[str]:
    """``inputs`` with every name that may share memory with one of them."""
    return inputs.union(*(groups.get(name, frozenset()) for name in inputs))
