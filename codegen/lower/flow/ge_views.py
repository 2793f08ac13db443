"""GE: locals that hold views of a tensor the function was given, which read only what it was given.

``for chunk in hidden_states.split(self.chunk)``, ``a, b = x.chunk(2)``: each binding is a method whose ATen
schema returns views of ``self`` (``schema.aliases_self``), called on a given tensor with arguments that are
constants, loop counts or the object's state. Their data is the given tensor's, which the function does not write
(the caller checks that), nor through anything bound from it or put into a local with it, one step after another
(``c = a.view(-1)`` then ``c.add_(1)``; ``out.append(a)`` then ``out[0].add_(1)``: a tensor so written has no
view counted). Where the backend makes such views with an op of its own (GE's split is a kernel), a call reading
one reads that op's result, and GE orders the call after it by that data; the op itself reads only what the
function was given. So a call reading these needs no fork edge (``ge_given.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.schema import aliases_self
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["binds", "view_locals"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def view_locals(fn: _Function, given: set[str], plain: Callable[[ast.expr], bool], written: set[str]) -> set[str]:
    """Locals of ``fn`` every binding of which takes views of a name in ``given`` none of whose aliases is in
    ``written``; ``plain``: whether an argument of the view is a count or state (constants always are)."""
    bindings: dict[str, list[ast.expr | None]] = {}
    for stmt in walked_of(fn, ast.stmt):
        for name in binds(stmt):
            bindings.setdefault(name, []).append(_bound_value(stmt))
    holders = _stores(fn)
    shared = {name: [*bindings.get(name, []), *holders.get(name, [])] for name in {*bindings, *holders}}
    kept = {name for name in given if not _aliases(name, shared) & written}
    return {
        name
        for name, values in bindings.items()
        if name not in given and all(_views_of(v, kept, plain) for v in values)
    }


def _aliases(base: str, bindings: dict[str, list[ast.expr | None]]) -> set[str]:
    """``base`` and every name some binding or store of which may share its data, one step after another (as
    ``transfer.py`` follows aliases: views and references; a call's result is its own)."""
    found = {base}
    while True:
        more = {name for name, values in bindings.items() if name not in found and _shares(values, found)}
        if not more:
            return found
        found |= more


def _stores(fn: _Function) -> dict[str, list[ast.expr | None]]:
    """What statements put into a local without binding it: ``out.append(v)`` (every argument), ``d[k] = v``,
    ``o.a = v``: the local may then hold an alias of ``v``."""
    found: dict[str, list[ast.expr | None]] = {}
    for node in walked_of(fn, (ast.Call, ast.Assign)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            holder, values = node.func.value, [*node.args, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.Assign):
            holder, values = node.targets[0], [node.value]
            while isinstance(holder, (ast.Subscript, ast.Attribute)):
                holder = holder.value
        else:
            continue
        if isinstance(holder, ast.Name):
            found.setdefault(holder.id, []).extend(values)
    return found


def _shares(values: list[ast.expr | None], found: set[str]) -> bool:
    """Some binding is a view, an index or the reference of a name in ``found`` (or one the walk cannot read)."""
    return any(v is None or alias_sources(v) & found for v in values)


def binds(stmt: ast.stmt) -> frozenset[str]:
    """The names ``stmt`` itself binds (not the statements inside it)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return bound_names(stmt.target)
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return frozenset(n for item in stmt.items if item.optional_vars for n in bound_names(item.optional_vars))
    return bound_names(stmt) if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else frozenset()


def _bound_value(stmt: ast.stmt) -> ast.expr | None:
    """What a plain binding of names assigns: the iterable of a ``for``, the value of ``a, b = ...``."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        target, value = stmt.target, stmt.iter
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    else:
        return None
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    return value if all(isinstance(n, ast.Name) for n in names) else None


def _views_of(value: ast.expr | None, given: set[str], plain: Callable[[ast.expr], bool]) -> bool:
    """``x.split(n)``: a method returning views of a given tensor, each argument a constant, count or state."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and aliases_self(value.func.attr)):
        return False
    owner = value.func.value
    if any(k.arg is None for k in value.keywords) or any(isinstance(a, ast.Starred) for a in value.args):
        return False
    arguments = [*value.args, *(k.value for k in value.keywords)]
    return isinstance(owner, ast.Name) and owner.id in given and all(_literal(a) or plain(a) for a in arguments)


def _literal(node: ast.expr) -> bool:
    """A constant, a negative one, or a list or tuple of them (``dim=-1``, ``[2, 2]``)."""
    quiet = (ast.Constant, ast.UnaryOp, ast.USub, ast.List, ast.Tuple, ast.Load)
    return all(isinstance(n, quiet) for n in ast.walk(node))
