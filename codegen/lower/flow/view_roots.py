"""Which names' memory an expression, or a function's local, may be: views, indexes and elements of others.

A write in place through a view writes the tensor it views: ``a, b = x.chunk(2); a.mul_(2)`` writes ``x``, and so
do ``v = x.view(-1); v.add_(1)``, ``x[0].zero_()`` and ``x.transpose(0, 1).copy_(y)``. A value shares the memory of
a name when it is that name, an item, slice or attribute of it, an element unpacked from it, or what a method
returns whose ATen schema says it returns views of ``self`` (``Tensor(a) self -> Tensor(a)``, a list of them too:
``schema.aliases_self``); a container built of such values, and a container a statement puts one into
(``out.append(a)``, ``d[k] = a``), holds them too. Any other call, or arithmetic, makes a tensor of its own.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from codegen.index.walked import walked_of
from codegen.lower.flow.aten_forms import function_form, function_view
from codegen.lower.flow.exprs import META_ATTRS
from codegen.lower.flow.schema import aliases_self

__all__ = [
    "TAKES_IN",
    "alias_parts",
    "alias_root",
    "alias_sources",
    "reads_attribute",
    "Holders",
    "flows",
    "spread",
    "view_roots",
    "view_base",
]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Holders = dict[str, frozenset[str]]  # a name -> what it may hold (names whose memory, attributes of an object)

# Python's own containers take a value in through these methods (``acc.append(t)``, ``cache.update(...)``).
TAKES_IN = frozenset({"append", "extend", "insert", "update", "setdefault"})  # not ``add``: a tensor's is not


def view_base(node: ast.expr) -> ast.expr | None:
    """What ``node`` is a view of, one step: the chain below an attribute, item or star, a view method's object, or
    the object ``getattr(obj, name)`` reads an attribute of."""
    if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        return node.value
    if reads_attribute(node):
        return node.args[0]  # type: ignore[attr-defined]
    if isinstance(node, ast.Call) and function_form(node) is not None:  # ``torch.narrow(x, ...)``: a view of ``x``
        return function_view(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and aliases_self(node.func.attr):
        return node.func.value
    return None


def alias_root(node: ast.expr) -> str | None:
    """The name at the root of a chain of views (``kv[0]``, ``x.transpose(0, 1)``, ``self.buf``), if a name; none
    through a tensor's metadata (``x.device.type``, ``x.shape[0]``: no memory of ``x``)."""
    while (below := view_base(node)) is not None:
        if isinstance(node, ast.Attribute) and node.attr in META_ATTRS:
            return None
        node = below
    return node.id if isinstance(node, ast.Name) else None


def alias_parts(node: ast.expr | None) -> list[ast.expr]:
    """The chains of views ``node`` may be or hold (``x[0]`` of ``(x[0], y.T) if c else z``)."""
    if node is None:
        return []
    if isinstance(node, ast.Name) or view_base(node) is not None:
        return [node]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [part for e in node.elts for part in alias_parts(e)]
    if isinstance(node, ast.IfExp):
        return alias_parts(node.body) + alias_parts(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [part for v in node.values for part in alias_parts(v)]
    if isinstance(node, ast.NamedExpr):
        return alias_parts(node.value)
    return []


def alias_sources(node: ast.expr | None) -> frozenset[str]:
    """The names whose memory ``node`` may be or hold (``x``, ``x[0]``, ``x.split(2)``, ``(a, b)``, ``a if c else
    b``, ``a or b``, ``(v := x[0])``)."""
    return frozenset(root for part in alias_parts(node) if (root := alias_root(part)))


def view_roots(fn: _Function, bases: tuple[str, ...] | list[str]) -> dict[str, frozenset[str]]:
    """Each name of ``fn`` that may hold memory of one of ``bases``, with those bases (a base holds itself)."""
    found: dict[str, frozenset[str]] = {base: frozenset({base}) for base in bases}
    return spread(fn, found, lambda part, held: held.get(alias_root(part) or "", frozenset()))


def spread(
    fn: _Function,
    found: dict[str, frozenset[str]],
    held: Callable[[ast.expr, dict[str, frozenset[str]]], frozenset[str]],
) -> dict[str, frozenset[str]]:
    """``found`` grown over every binding and every store into a container of ``fn``, one step after another, in
    any order (a loop may bind a name from one bound later in its body): a name gets what ``held`` says each chain
    of views of the value holds, given what has been found so far."""
    moves = list(flows(fn))
    changed = True
    while changed:
        changed = False
        for holders, value in moves:
            shared = frozenset().union(*(held(part, found) for part in alias_parts(value)))
            for name in holders:
                if not shared <= found.get(name, frozenset()):
                    found[name] = found.get(name, frozenset()) | shared
                    changed = True
    return found


def flows(fn: _Function) -> Iterator[tuple[list[str], ast.expr]]:
    """Each place a value goes into names: the names bound, or the container stored into, and the value."""
    for node in walked_of(fn, (ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension)):
        if isinstance(node, ast.Assign):
            yield from ((_bound(t), node.value) for t in node.targets)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            yield _bound(node.target), node.value
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            yield _bound(node.target), node.iter
    for named in walked_of(fn, ast.NamedExpr):
        yield [named.target.id], named.value
    for call in walked_of(fn, ast.Call):
        if isinstance(call.func, ast.Attribute) and call.func.attr in TAKES_IN:
            holder = alias_root(call.func.value)
            for value in [*call.args, *(k.value for k in call.keywords)]:
                yield ([holder] if holder else []), value


def _bound(target: ast.expr) -> list[str]:
    """The names a target binds (``a, (b, *c)``), or the root of the container a store goes into (``d[k]``,
    ``o.attr``)."""
    if isinstance(target, (ast.Subscript, ast.Attribute)):
        root = alias_root(target)
        return [root] if root else []
    if isinstance(target, ast.Name):  # most targets: what the walk below finds, without a walk
        return [target.id] if isinstance(target.ctx, ast.Store) else []
    return [n.id for n in walked_of(target, ast.Name) if isinstance(n.ctx, ast.Store)]


def reads_attribute(node: ast.expr) -> bool:
    """``getattr(obj, name)`` (a default too): an attribute of ``obj``, named or computed."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "getattr"
        and len(node.args) in (2, 3)
        and not node.keywords
    )
