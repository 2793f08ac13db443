"""Which names of a caller hold one value for the whole call, so a test of them read twice reads the same.

Two ``if``s that test one value decide alike (``fixed_tests.py``), and a join placed under the first is placed
again only where it did not run (a re-test of the same value): both need the value not to change between the
tests. Three kinds, each decided on the function's own bindings and reads:

- *truth*: a local bound exactly once, outside every loop, to a value whose truth cannot change: surely a
  ``bool`` (``is``/``is not``/``in``/``not in`` comparisons, ``not ...``, a bool constant, ``and``/``or`` of
  those), or any comparison when the name is read only as a whole ``if`` test (a fresh result nothing else can
  reach, so nothing can change it in place);
- *identity*: such a local bound to any value, or a parameter the function never rebinds: ``x is None`` reads
  one value wherever it is read;
- *contents*: of those, a name read only in ``x is None`` tests and lookups ``x[...]`` (never stored into,
  called, passed on or copied), so ``x["k"] is None`` reads one value too. The premise, as for an object's
  state: what the function calls reaches such a mapping only through the names it is given.

"Bound" counts every binding in the function and in functions nested in it (``del``, a loop target, ``with``/
``except`` aliases, walrus, import, ``global``/``nonlocal``): a name with any other binding is none of these.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.exprs import NAME_BINDERS, binding_name, scope_nodes

__all__ = ["FixedValues", "fixed_values"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SURE = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


@attrs.frozen
class FixedValues:
    """The names of one function that hold one value, by kind (module docstring)."""

    truth: frozenset[str] = frozenset()
    identity: frozenset[str] = frozenset()
    contents: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.identity)


@per_node
def fixed_values(fn: _Function) -> FixedValues:
    """The fixed names of ``fn``."""
    stores: dict[str, int] = {}
    for node in walked_of(fn, ast.Name):
        if not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
    other = list(_other_bindings(fn))
    once = _bound_once(fn, stores, set(other))
    truth = frozenset(name for name, value in once.items() if _keeps_truth(value, name, fn))
    params = {a.arg for a in _params(fn.args)}
    identity = frozenset(once) | {p for p in params if p not in stores and other.count(p) == 1}
    return FixedValues(truth=truth, identity=identity, contents=identity & _only_looked_up(fn))


def _bound_once(fn: _Function, stores: dict[str, int], other: set[str]) -> dict[str, ast.expr]:
    """The locals a plain ``x = <value>`` outside every loop binds, and nothing else: each with its value."""
    in_loops = {id(n) for loop in walked_of(fn, _LOOPS) for n in scope_nodes(loop)}
    return {
        target.id: stmt.value
        for stmt in scope_nodes(fn)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and id(stmt) not in in_loops
        for target in stmt.targets
        if isinstance(target, ast.Name) and stores[target.id] == 1 and target.id not in other
    }


def _params(args: ast.arguments) -> list[ast.arg]:
    rest = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *rest]


# what ``_other_bindings`` reads
_BINDERS: tuple[type[ast.AST], ...] = (ast.arg, ast.Global, ast.Nonlocal, *NAME_BINDERS)


def _other_bindings(fn: _Function) -> Iterable[str]:
    """Every name ``fn`` or a function in it binds otherwise than by an assignment target (its parameters too)."""
    for node in walked_of(fn, _BINDERS):
        if isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            yield from node.names
        elif node is not fn and (name := binding_name(node)) is not None:
            yield name


def _keeps_truth(value: ast.expr, name: str, fn: _Function) -> bool:
    return _surely_bool(value) or (isinstance(value, ast.Compare) and _only_tested(name, fn))


def _surely_bool(value: ast.expr) -> bool:
    if isinstance(value, ast.Compare):
        return all(isinstance(op, _SURE) for op in value.ops)
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, ast.Not)
    if isinstance(value, ast.BoolOp):
        return all(_surely_bool(v) for v in value.values)
    return isinstance(value, ast.Constant) and isinstance(value.value, bool)


def _only_tested(name: str, fn: _Function) -> bool:
    """``name`` is read only as the whole test of an ``if`` (or under its ``not``)."""
    tests = {id(n) for s in walked_of(fn, ast.If) for n in (s.test, getattr(s.test, "operand", None)) if n}
    return all(id(n) in tests for n in walked_of(fn, ast.Name) if n.id == name and isinstance(n.ctx, ast.Load))


def _only_looked_up(fn: _Function) -> set[str]:
    """The names every read of which is ``x is None``, ``x is not None`` or a lookup ``x[...]`` (not a store)."""
    allowed: set[int] = set()
    for node in walked_of(fn, ast.AST):
        match node:
            case ast.Compare(left=ast.Name() as name, ops=[ast.Is() | ast.IsNot()], comparators=[ast.Constant(None)]):
                allowed.add(id(name))
            case ast.Subscript(value=ast.Name() as name, ctx=ast.Load()):
                allowed.add(id(name))
    names = {n.id for n in walked_of(fn, ast.Name)}
    loads = [n for n in walked_of(fn, ast.Name) if isinstance(n.ctx, ast.Load)]
    return names - {n.id for n in loads if id(n) not in allowed}
