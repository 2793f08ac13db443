"""Which module-level functions return one of their parameters as it came (``return cache`` after
``cache.index_copy_(0, slots, values)``).

A side call whose result *is* its input leaves that input's memory with the caller: the caller holds it through
the result, and needs no ``record_stream`` for it where it reads the result after the join
(``codegen/lower/flow/returned_inputs.py``). A caller in another module sees the fact when it imports the function
by name and both files are in the run (the run's return facts, ``returns.py``, carry it under ``name + PARAM``). It
is made only where it is certain: a plain function (no decorator), no generator, bound once in its module's scope
(no other ``def``, assignment, import or ``global`` rebinds it), whose only ``return`` is its last statement and
names a parameter nothing in its body rebinds. A file transformed alone sees no fact of another file: its calls
keep their inputs alive as before.
"""

from __future__ import annotations

import ast
from collections import Counter

from codegen.index.walked import per_node, walked, walked_of
from codegen.lower.flow.exprs import binding_name, bound_names

__all__ = ["PARAM", "bound_once", "last_return", "returned_param", "returned_params", "returned_value"]

PARAM = ":param"  # the key suffix of the fact: ``{"write_slots:param": "0 cache"}`` (position, or -1, and name)

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def returned_params(tree: ast.Module) -> dict[str, str]:
    """``{name + PARAM: "<position> <parameter>"}`` for each module-level function returning a parameter as it
    came (the position among the positional parameters, -1 for a keyword-only one)."""
    candidates = [
        (node, name)
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.decorator_list
        for name in [returned_param(node)]
        if name is not None
    ]
    once = bound_once(tree) if candidates else frozenset()  # the module's walk only where a function may count
    found: dict[str, str] = {}
    for node, name in candidates:
        if node.name in once:
            positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            found[node.name + PARAM] = f"{positional.index(name) if name in positional else -1} {name}"
    return found


def returned_param(fn: _Function) -> str | None:
    """The parameter ``fn`` returns as it came (its only ``return``, last, names it, nothing rebinds it, and
    ``fn`` is no generator)."""
    last = last_return(fn)
    if last is None or not isinstance(last.value, ast.Name):
        return None
    name = last.value.id
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    rebound = any(name in bound_names(stmt) for stmt in fn.body)
    return name if name in params and not rebound else None


def last_return(fn: _Function) -> ast.Return | None:
    """``fn``'s only ``return`` (those of nested definitions counted too), its last statement, in no generator."""
    returns = walked_of(fn, ast.Return)
    last = fn.body[-1] if fn.body else None
    if len(returns) != 1 or last is not returns[0] or walked_of(fn, (ast.Yield, ast.YieldFrom)):
        return None
    return last


def returned_value(fn: _Function) -> ast.expr | None:
    """The value of ``fn``'s only ``return`` (:func:`last_return`); None where there is none, or it returns
    nothing."""
    last = last_return(fn)
    return last.value if last is not None else None


@per_node
def bound_once(tree: ast.Module) -> frozenset[str]:
    """The names the module's scope binds exactly once, and that no function declares ``global`` (found once per
    tree: each planned call of the module asks)."""
    counts: Counter[str] = Counter()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        name = node.id if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) else binding_name(node)
        if name:
            counts[name] += 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend([*node.decorator_list, *getattr(node, "bases", ())])
        elif not isinstance(node, ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    declared = {name for node in walked(tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
    return frozenset(name for name, n in counts.items() if n == 1 and name not in declared)
