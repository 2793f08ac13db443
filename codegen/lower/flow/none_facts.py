"""Which names a statement surely binds to something other than None, and which names any statement may rebind.

``q, s = self.quant(h, True)`` leaves ``q`` and ``s`` not None when ``quant`` is a function of the caller's
module (or a method of its class) annotated to return a tensor or a ``tuple[...]`` of tensors, whose every
``return`` gives such a value and whose body cannot end without one. A function without an annotation, one
annotated ``X | None`` (or anything but a tensor or a tuple), or one with a bare ``return``, a ``return None``
or a path off its end gives no fact. :mod:`codegen.lower.flow.guard_paths` reads these facts to drop the
branch of an ``if q is None`` test that cannot run.
"""

from __future__ import annotations

import ast

from codegen.frontend.signature import Tensorness, annotation_tensorness
from codegen.index import scan
from codegen.index.walked import per_node
from codegen.lower.flow.exprs import binding_name, bound_names, scope_nodes
from codegen.lower.flow.local_returns import local_returns
from codegen.lower.flow.tensors import Returns, tuple_elements

__all__ = ["never_none", "not_none", "rebound"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def never_none(tree: ast.Module, qualname: str, receiver: str | None) -> Returns:
    """The callables a caller spells (``f``, ``self.m``) whose result is never None, with their annotation: the
    same for every caller of one class (or of the module) and receiver, so read once for them (a copy handed out)."""
    owner = qualname.rpartition(".")[0]
    kept = _kept(tree)
    if (owner, receiver) not in kept:
        kept[(owner, receiver)] = _never_none(tree, qualname, receiver)
    return dict(kept[(owner, receiver)])


@per_node
def _kept(tree: ast.Module) -> dict[tuple[str, str | None], Returns]:
    return {}  # (the caller's class, its receiver) -> ``never_none``


def _never_none(tree: ast.Module, qualname: str, receiver: str | None) -> Returns:
    """``never_none`` as read for ``qualname`` (``local_returns`` reads its class alone, not the method)."""
    functions = scan.functions_by_qualname(tree)
    owner = qualname.rpartition(".")[0]
    found: Returns = {}
    for spelled, annotation in local_returns(tree, qualname, receiver).items():
        head, _, attr = spelled.rpartition(".")
        fn = functions.get(f"{owner}.{attr}" if head and head == receiver else spelled)
        if fn is not None and _sure_value(annotation) and _always_returns(fn):
            found[spelled] = annotation
    return found


def not_none(stmt: ast.stmt, returns: Returns) -> frozenset[str]:
    """The names ``stmt`` (one plain assignment of a call of ``returns``) binds to a value that is not None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)):
        return frozenset()
    target, call = stmt.targets[0], stmt.value
    if (scan.dotted_name(call.func) or ast.unparse(call.func)) not in returns:  # a chain spelled as unparse does
        return frozenset()
    if isinstance(target, ast.Name):
        return frozenset({target.id})
    elements = tuple_elements(call, returns)
    if not isinstance(target, ast.Tuple) or elements is None or len(elements) != len(target.elts):
        return frozenset()
    pairs = zip(target.elts, elements)
    return frozenset(t.id for t, e in pairs if isinstance(t, ast.Name) and _sure_value(e))


@per_node
def rebound(node: ast.AST) -> frozenset[str]:
    """Every name ``node`` may bind or unbind in its function: assignment targets and walruses, ``del``, the
    names of nested definitions, imports, ``except ... as`` and ``match`` captures."""
    found = set(bound_names(node))
    for sub in scope_nodes(node):
        name = sub.id if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Del) else binding_name(sub)
        if name:
            found.add(name)
    return frozenset(found)


@per_node
def _sure_value(annotation: ast.expr) -> bool:
    """A tensor, or a tuple (itself never None, whatever it holds); read once per annotation."""
    if annotation_tensorness(annotation) is Tensorness.TENSOR:
        return True
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return False  # a quoted annotation: read as written only when it is a tensor
    return isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in ("tuple", "typing.Tuple", "Tuple")


@per_node
def _always_returns(fn: _Function) -> bool:
    """Every ``return`` of ``fn``'s own body gives a value that is not a literal None, and its last statement
    returns or raises (no path runs off its end); a generator gives no fact. Read once per function (each caller
    of its module asks of every annotated function it sees)."""
    if not fn.body or not isinstance(fn.body[-1], (ast.Return, ast.Raise)):
        return False  # a path may run off its end (the cheap test first: no walk)
    own = scope_nodes(fn)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in own):
        return False
    return not any(isinstance(n, ast.Return) and (n.value is None or _none_literal(n.value)) for n in own)


def _none_literal(node: ast.expr) -> bool:
    """None as written, or as one side of ``a if c else None`` or ``a or None``."""
    if isinstance(node, ast.IfExp):
        return _none_literal(node.body) or _none_literal(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(_none_literal(v) for v in node.values)
    return isinstance(node, ast.Constant) and node.value is None
