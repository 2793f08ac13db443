"""Which parameters a function surely reads in an op on every path, run-wide (``inplace_partial_rotary_mul(q, cos,
sin, d)`` reads ``cos`` and ``sin`` whatever happens).

A captured graph frees a tensor after its last use in the graph, not when a Python name dies. So a caller that hands
a tensor on to a function keeps it alive only if that function surely uses it: a use that happens only under a
guard (cann_v4_compressor's ``sparse_attn``, which reads ``cos`` only in a layer of compress ratio 4) is no use. A
use is an op that reads the memory on the caller's stream: an operand of an arithmetic or comparison, a tensor method
that is no view and reads more than metadata, an argument of a ``torch`` function, or an argument a function or
submodule of the user's package surely uses in turn (read in its module's tree where the run holds it; a module the
run lacks: no use). A view (``x.unsqueeze(1)``, ``x[0]``, ``v = x.view(...)``) is followed to its own use; a
statement that calls a stream function of the run reads on another stream: no use. ``if`` branches must both use
it; a loop, ``with`` or ``try`` uses it only in its header; a ``def`` or ``class`` without decorators runs no op
(its body runs later, if ever) and goes on; a ``return`` without the use, a jump, ``raise``, or a rebinding of
every name that holds it ends the path without one.
"""

from __future__ import annotations

import ast

from codegen.index.per_index import per_index
from codegen.index.used_calls import Scope, Uses, handed_names, parents_of
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.callsites import find_calls
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.schema import aliases_self

__all__ = ["READ", "block_reads", "element", "surely_reads", "surely_used"]

READ, THROUGH, FAIL = "read", "through", "fail"  # every path reads; some path goes on without; some path ends
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def surely_used(scope: Scope, fn: _Function, depth: int = 0) -> frozenset[str]:
    """The parameters of ``fn`` (in ``scope``) that its body surely reads in an op on every path."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    return frozenset(p for p in params if p != scope.receiver and surely_reads(scope, fn, p, depth))


def surely_reads(scope: Scope, fn: _Function, key: str, depth: int = 0) -> bool:
    """``fn``'s body surely reads, in an op on every path, the memory of ``key``: a parameter, or an element of a
    tuple parameter (``"kv_cache[4]"``, read as ``kv_cache[4]`` or through ``..., k_cache, _ = kv_cache``). Read
    once per index (each caller of a function, and each of their callees, asks again)."""
    kept = _readings(scope.index)
    which = (scope.tree, scope.module, scope.owner, scope.receiver, fn, key, depth)
    if which not in kept:
        kept[which] = block_reads(scope, fn.body, {key}, depth) == READ
    return kept[which]


@per_index
def _readings(index: object) -> dict[tuple[object, ...], bool]:
    return {}


def element(name: str, index: int) -> str:
    """The key of element ``index`` of the tuple ``name`` holds."""
    return f"{name}[{index}]"


def block_reads(scope: Scope, block: list[ast.stmt], names: set[str], depth: int = 0) -> str:
    """Whether ``block`` surely reads the memory ``names`` hold (READ), may go on without (THROUGH), or may end
    the path without (FAIL); ``names`` is updated with the views bound and the names rebound on the way."""
    for stmt in block:
        found = _statement(scope, stmt, names, depth)
        if found != THROUGH:
            return found
    return THROUGH


def _statement(scope: Scope, stmt: ast.stmt, names: set[str], depth: int) -> str:
    if isinstance(stmt, ast.If):
        return READ if _reads(scope, stmt.test, names, depth) else _branches(scope, stmt, names, depth)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return FAIL if stmt.decorator_list or stmt.name in names else THROUGH  # runs no op (its body runs later)
    header = _header(stmt)
    if header is not None:
        if any(_reads(scope, h, names, depth) for h in header):
            return READ
        return FAIL if names & bound_names(stmt) or _leaves(stmt) else THROUGH
    if _names(stmt, names) and not _aside(scope, stmt) and _reads(scope, stmt, names, depth):
        return READ
    if isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Delete)):
        return FAIL
    handed = handed_names(scope, stmt, names)  # ``z = F.dropout(t, ...)``: ``z`` may be ``t``
    _rebind(stmt, names)
    names |= handed
    return THROUGH if names else FAIL


def _branches(scope: Scope, stmt: ast.If, names: set[str], depth: int) -> str:
    """Both branches read, or one ends the path; else the names that hold the memory on every path going on."""
    held = [set(names), set(names)]
    found = [block_reads(scope, b, h, depth) for b, h in zip((stmt.body, stmt.orelse), held)]
    if FAIL in found or found == [READ, READ]:
        return FAIL if FAIL in found else READ
    names.intersection_update(*(h for h, f in zip(held, found) if f == THROUGH))
    return THROUGH if names else FAIL


def _header(stmt: ast.stmt) -> list[ast.AST] | None:
    """What a compound statement other than ``if`` runs before its body (None: not one)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, ast.While):
        return [stmt.test]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in stmt.items]
    if isinstance(stmt, (ast.Try, ast.Match)):
        return []
    return None


def _leaves(stmt: ast.stmt) -> bool:
    return any(isinstance(n, (ast.Return, ast.Raise, ast.Break, ast.Continue)) for n in walked(stmt))


def _rebind(stmt: ast.stmt, names: set[str]) -> None:
    """The names holding the memory after ``stmt``: those it rebinds go (and the elements of tuples they held), a
    name it binds to a view, or to the element held (``a, k, b = held``, ``k = held[1]``), comes."""
    comes = _bound_to(stmt, names)
    bound = bound_names(stmt)
    names -= {n for n in names if n.partition("[")[0] in bound}
    names |= comes


def _bound_to(stmt: ast.stmt, names: set[str]) -> set[str]:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return set()
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        return {target.id} if _view_of(value, names) else set()
    elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else []
    if not isinstance(value, ast.Name) or any(isinstance(e, ast.Starred) for e in elts):
        return set()
    return {e.id for k, e in enumerate(elts) if isinstance(e, ast.Name) and element(value.id, k) in names}


def _view_of(node: ast.expr, names: set[str]) -> bool:
    """``node`` is a name of ``names``, an element held (``held[1]``), or a chain of views of one (``x.view(...)``,
    ``x[0]``, ``x.T``)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.Subscript) and _element_key(node) in names:
            return True
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and aliases_self(node.func.attr):
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr in ("T", "mT", "H", "mH"):
            node = node.value
        else:
            return False


def _element_key(node: ast.Subscript) -> str | None:
    """``held[1]`` -> ``"held[1]"``; None for any other subscript."""
    index = node.slice
    if not (isinstance(node.value, ast.Name) and isinstance(index, ast.Constant) and type(index.value) is int):
        return None
    return element(node.value.id, index.value)


def _aside(scope: Scope, stmt: ast.stmt) -> bool:
    """``stmt`` calls a stream function of the run: what it reads, it may read on another stream."""
    calls = {id(s.call) for s in find_calls(scope.module, scope.tree, scope.index)}  # type: ignore[arg-type]
    return any(id(node) in calls for node in walked(stmt))


def _unsure(node: ast.AST) -> list[ast.AST]:
    """The parts of ``node`` that may not run when it does: a lambda's body (later, if at all), a branch of a
    conditional expression, an operand of ``and``/``or`` after the first, a comprehension's element and filters (no
    item, no element)."""
    if isinstance(node, ast.Lambda):
        return [node]
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.BoolOp):
        return list(node.values[1:])
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        first = node.generators[0].iter
        return [n for n in ast.iter_child_nodes(node) if n is not first and not isinstance(n, ast.comprehension)] + [
            p for g in node.generators for p in ast.iter_child_nodes(g) if p is not first
        ]
    return []


def _names(node: ast.AST, names: set[str]) -> bool:
    """``node`` names one of ``names``, or the tuple an element of ``names`` is held in: else it reads none."""
    spelled = {n.partition("[")[0] for n in names}
    return any(n.id in spelled for n in walked_of(node, ast.Name))


def _reads(scope: Scope, node: ast.AST, names: set[str], depth: int) -> bool:
    """``node`` surely reads, in an op, the memory of one of ``names`` (an element held: read as ``held[1]``, or
    passed in its tuple to a function that reads that element)."""
    if not _names(node, names):
        return False
    later = {id(n) for part in walked(node) for maybe in _unsure(part) for n in walked(maybe)}  # may not run
    uses = Uses(scope=scope, parents=parents_of(node), depth=depth, follow=surely_reads)
    held = {n.partition("[")[0]: int(n[n.index("[") + 1 : -1]) for n in names if "[" in n}
    for n in walked(node):
        if id(n) in later:
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names and uses.used(n):
            return True
        if isinstance(n, ast.Subscript) and _element_key(n) in names and uses.used(n):
            return True
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in held and uses.passed(n, held[n.id]):
            return True
    return False
