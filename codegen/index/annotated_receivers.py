"""The ``forward`` a call reaches through a parameter annotated with a class of the run: ``m.indexer(c)`` in
``def f(self, m: Block)``, where ``Block.__init__`` makes ``self.indexer = Indexer(...)``.

``used_calls.py`` follows a call on to the function it runs to learn whether it surely reads an argument (what
``held_params.py`` asks of a private function's callers: is ``c`` read again after the call?). It followed a submodule
of the caller's own object (``self.indexer(c)``) but not one of an object the caller was given: a layer loop handing
each layer to a private helper (``self._run(layer, x, c)``, reading ``layer.indexer(c)`` after a side call) kept ``c``
alive for the side stream with a ``record_stream`` its caller's read already made needless. The parameter's annotation
names the class as surely as ``__init__`` names the submodule's: the parameter is never rebound in the function, its
annotation is a class name (``Block`` or ``"Block"``) the module defines or imports from its own package, and the
run's index holds what that class's ``__init__`` makes (``RunIndex.submodules``). Premise, the one the index already
makes of ``self``'s submodules: an object given as a ``Block`` is built by ``Block.__init__`` (a subclass that makes
``indexer`` of another class breaks it).

A private method of the class reads the same way (``m._helper(c)``, ``def _helper(self, c): return self.indexer(c)``):
it was followed on ``self`` only, so the keep stayed where the caller's read went through a method of the object it
was given. Which method a private name runs is read as for ``self`` (:func:`private_method`: no other class of the
class's module defines it, and a subclass in another module overrides no private name).
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.walked import per_node, walked

__all__ = ["annotated_class", "enclosing_functions", "private_method"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def annotated_class(tree: ast.Module, func: ast.Attribute) -> str | None:
    """The class the receiver of ``func`` (``m`` of ``m.indexer``) is annotated with, where it is a parameter of the
    function around the call, never rebound there."""
    if not isinstance(func.value, ast.Name):
        return None
    fn = enclosing_functions(tree).get(id(func))
    name = func.value.id
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs] if fn is not None else []
    param = next((p for p in params if p.arg == name), None)
    if fn is None or param is None or _rebound(fn, name):
        return None
    annotation = param.annotation
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value if annotation.value.isidentifier() else None
    return annotation.id if isinstance(annotation, ast.Name) else None


def _rebound(fn: _Function, name: str) -> bool:
    """``name`` is stored, deleted or declared ``global``/``nonlocal`` anywhere in ``fn`` (nested scopes too)."""
    stored = any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in walked(fn))
    declared = any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in walked(fn))
    return stored or declared


@per_node
def enclosing_functions(tree: ast.Module) -> dict[int, _Function]:
    """Each node of ``tree`` (by id) -> the innermost function around it."""
    found: dict[int, _Function] = {}
    stack: list[tuple[ast.AST, _Function | None]] = [(tree, None)]
    while stack:
        node, fn = stack.pop()
        inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
        for child in ast.iter_child_nodes(node):
            if inner is not None:
                found[id(child)] = inner
            stack.append((child, inner))
    return found


def private_method(tree: ast.Module, owner: str, name: str) -> _Function | None:
    """``owner.name`` where the name is private to the module (a subclass elsewhere overrides no such method) and
    no other class of the module defines it (an override the call may reach)."""
    if not name.startswith("_") or name.startswith("__"):
        return None
    functions = scan.functions_by_qualname(tree)
    others = [q for q in functions if q.endswith(f".{name}") and q != f"{owner}.{name}"]
    return None if others else functions.get(f"{owner}.{name}")
