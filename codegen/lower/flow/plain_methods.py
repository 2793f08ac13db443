"""What the methods of a plain class do with their object, as ``returned_state.py`` asks it: which attribute of
``self`` a method returns, and whether a function using a parameter of the class only through its attributes and
methods leaves an attribute as it was (neither it nor any method it reaches through ``self`` stores it).

A method that passes its ``self`` on, returns or rebinds it, or is decorated, is not followed: the answer is then
"may change".
"""

from __future__ import annotations

import ast

from codegen.index.returned import last_return
from codegen.index.scan import functions_of
from codegen.index.walked import walked_of

__all__ = ["self_returned", "unchanged_attribute"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def self_returned(cls: ast.ClassDef, name: str) -> list[str]:
    """The attribute of ``self`` each value the method ``name`` returns is ("" for anything else)."""
    method = _methods(cls).get(name)
    last = last_return(method) if method is not None and method.args.args else None
    if last is None or last.value is None or method is None:
        return []
    receiver = method.args.args[0].arg
    elts = last.value.elts if isinstance(last.value, ast.Tuple) else [last.value]
    return [e.attr if isinstance(e, ast.Attribute) and _name(e.value) == receiver else "" for e in elts]


def unchanged_attribute(fn: _Function, param: str, attr: str, cls: ast.ClassDef) -> bool:
    """``fn`` uses ``param`` only as ``param.x`` and ``param.m(...)``, and neither it nor any method it reaches
    stores ``attr``."""
    uses = {id(n.value): n for n in walked_of(fn, ast.Attribute) if _name(n.value) == param}
    names = [n for n in walked_of(fn, ast.Name) if n.id == param]
    if any(id(n) not in uses for n in names) or any(not isinstance(n.ctx, ast.Load) for n in uses.values()):
        return False
    called = {
        n.func.attr for n in walked_of(fn, ast.Call) if isinstance(n.func, ast.Attribute) and n.func.value in names
    }
    reached = _reached(cls, called)
    return reached is not None and not any(_stores(m, attr) for m in reached)


def _reached(cls: ast.ClassDef, called: set[str]) -> list[_Function] | None:
    """The methods ``called`` and those they call through their ``self``, in turn (None: one is not the class's,
    or uses its ``self`` otherwise)."""
    methods, seen, todo = _methods(cls), set(), list(called)
    while todo:
        name = todo.pop()
        method = methods.get(name)
        if name in seen:
            continue
        if method is None or not method.args.args or method.decorator_list:
            return None
        receiver = method.args.args[0].arg
        selfs = {id(n.value) for n in walked_of(method, ast.Attribute) if _name(n.value) == receiver}
        if any(n.id == receiver and id(n) not in selfs for n in walked_of(method, ast.Name)):
            return None  # ``self`` passed on, returned or rebound
        seen.add(name)
        todo += [
            n.func.attr
            for n in walked_of(method, ast.Call)
            if isinstance(n.func, ast.Attribute) and _name(n.func.value) == receiver
        ]
    return [methods[n] for n in seen]


def _stores(method: _Function, attr: str) -> bool:
    receiver = method.args.args[0].arg
    return any(
        n.attr == attr and _name(n.value) == receiver and not isinstance(n.ctx, ast.Load)
        for n in walked_of(method, ast.Attribute)
    )


def _methods(cls: ast.ClassDef) -> dict[str, _Function]:
    return {f.name: f for f in functions_of(cls)}


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""
