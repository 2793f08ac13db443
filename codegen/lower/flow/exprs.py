"""What an expression does with the names of its function: reads their data, or binds them.

Reading a tensor's metadata (``x.shape``, ``x.size()``, ``x is None``, ``isinstance(x, T)``, ``len(x)``)
never touches its memory, so it is not a read here: a join need not wait for it.
Names read inside a lambda or comprehension are reads of the statement that holds it.
"""

from __future__ import annotations

import ast

from codegen.index.children import LEAVES, children
from codegen.index.walked import per_node, walked, walked_of

__all__ = [
    "chain_root",
    "META_ATTRS",
    "NAME_BINDERS",
    "binding_name",
    "bound_names",
    "data_reads",
    "deleted_names",
    "leaves",
    "loaded_names",
    "only_metadata_calls",
    "runs_op",
    "scope_nodes",
    "scoped_calls",
]

META_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "layout", "is_cuda", "requires_grad", "names"})
_META_METHODS = frozenset(
    {"size", "dim", "numel", "stride", "element_size", "is_contiguous", "get_device", "is_floating_point", "is_complex"}
)
_META_CALLS = frozenset({"isinstance", "len", "type", "id", "callable"})
_SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_UNBOUND = (ast.comprehension, *_SCOPES)  # what they bind is not bound in the enclosing function


def _metadata_name(node: ast.AST) -> ast.Name | None:
    """The name whose metadata ``node`` reads (``x.shape``, ``x.size(0)``, ``x is None``...), if it is one."""
    if isinstance(node, ast.Attribute) and node.attr in META_ATTRS and isinstance(node.value, ast.Name):
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _META_METHODS
        and isinstance(node.func.value, ast.Name)
    ):
        return node.func.value
    return None


def _skipped(node: ast.AST) -> list[ast.AST]:
    """Children of ``node`` that read only metadata, so the walk does not count them."""
    if isinstance(node, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return [side for side in (node.left, *node.comparators) if isinstance(side, ast.Name)]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _META_CALLS
        and node.args
        and isinstance(node.args[0], ast.Name)
    ):
        return [node.args[0]]
    found = _metadata_name(node)
    return [found] if found is not None else []


def data_reads(node: ast.AST) -> set[str]:
    """Names whose value ``node`` may read beyond its metadata (lambdas and comprehensions included); a set of
    the caller's own, read once per node (the analysis asks of a statement on every pass over its loop)."""
    return set(_data_reads(node))


@per_node
def _data_reads(node: ast.AST) -> frozenset[str]:
    found: set[str] = set()
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Name):
            if not isinstance(current.ctx, ast.Store):
                found.add(current.id)
            continue
        if type(current) in LEAVES:
            continue  # a constant: nothing under it
        skipped = _skipped(current)
        if skipped and _metadata_name(current) is not None:
            continue  # ``x.shape`` / ``x.size(0)``: nothing below is read (the call's arguments are constants)
        stack.extend(child for child in children(current) if child not in skipped)
    return frozenset(found)


def loaded_names(node: ast.AST) -> set[str]:
    """Every name ``node`` loads, metadata reads included."""
    return {n.id for n in walked_of(node, ast.Name) if not isinstance(n.ctx, ast.Store)}


@per_node
def bound_names(node: ast.AST) -> frozenset[str]:
    """Names an assignment target (or a walrus anywhere in ``node``) binds in the enclosing function (found
    once per node: the lowering asks of the same statements again and again)."""
    if isinstance(node, _UNBOUND):
        return frozenset()  # their own names stay inside (a walrus in a comprehension is rare enough to ignore)
    hidden = {id(n) for inner in walked_of(node, _UNBOUND) for n in walked(inner)}
    return frozenset(
        n.id for n in walked_of(node, ast.Name) if isinstance(n.ctx, ast.Store) and id(n) not in hidden
    )  # a walrus's target is a name stored too


@per_node
def scope_nodes(node: ast.AST) -> tuple[ast.AST, ...]:
    """``node`` and what is under it, parents before children, but not inside a nested definition or lambda (their
    names stay there; a comprehension's walrus binds in the enclosing function, so comprehensions are entered)."""
    found: list[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        if type(current) not in LEAVES and (current is node or not isinstance(current, _SCOPES)):
            stack.extend(children(current))
    return tuple(found)


def binding_name(node: ast.AST) -> str | None:
    """The name ``node`` itself binds in its scope, besides assignment targets and walruses: a definition's name,
    an import's alias (its first part), ``except ... as``, a ``match`` capture; None for any other node."""
    kind = type(node)  # asked of every node of many walks: the parser's classes, looked up, not tested in turn
    if kind in _NAMED:
        return node.name  # type: ignore[attr-defined]
    if kind is ast.alias:
        return (node.asname or node.name).partition(".")[0]  # type: ignore[attr-defined]
    if kind is ast.MatchMapping:
        return node.rest  # type: ignore[attr-defined]
    return None


_NAMED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar})
# the kinds of node ``binding_name`` may name a binding of
NAME_BINDERS: tuple[type[ast.AST], ...] = (*_NAMED, ast.alias, ast.MatchMapping)


def deleted_names(node: ast.Delete) -> set[str]:
    return {t.id for t in node.targets if isinstance(t, ast.Name)}


def scoped_calls(node: ast.AST) -> list[ast.Call]:
    """Every call in ``node`` evaluated in this function's scope (not inside lambdas or nested definitions)."""
    found: list[ast.Call] = []
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if type(current) in LEAVES or isinstance(current, _SCOPES):
            continue
        if isinstance(current, ast.Call):
            found.append(current)
        stack.extend(children(current))
    return found


def only_metadata_calls(node: ast.AST) -> bool:
    """Every call in ``node`` reads metadata only (``len(xs)``, ``isinstance(x, T)``, ``x.size(0)``): no op runs."""
    return all(
        (isinstance(call.func, ast.Name) and call.func.id in _META_CALLS) or _metadata_name(call) is not None
        for call in walked_of(node, ast.Call)
    )


def runs_op(stmt: ast.AST) -> bool:
    """The statement may run an op: it calls, computes, indexes or compares (``flag = self.on and not
    prefill`` and ``cos, sin = cos_sin`` run none)."""
    ops = (ast.Call, ast.BinOp, ast.Subscript, ast.Compare, ast.AugAssign, ast.Await, ast.Yield, ast.YieldFrom)
    return any(
        isinstance(node, ops) or (isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not))
        for node in walked(stmt)
    )


def leaves(stmt: ast.AST) -> bool:
    """The statement may leave its block (``return``, ``raise``, ``break``, ``continue`` anywhere in it)."""
    return any(isinstance(n, (ast.Return, ast.Raise, ast.Break, ast.Continue)) for n in walked(stmt))


def chain_root(node: ast.expr) -> str:
    """The name an attribute or item chain starts from (``ds[i].t`` -> ``ds``; ``""``: none)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""
