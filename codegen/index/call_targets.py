"""Which function of the run a call in a function's body goes to, as far as the source says for sure.

``used_calls.py`` follows an argument into the function a call reaches to ask whether that function surely reads it:
a module-level function (of the module, or imported from the package where the run holds its module), a private
method of the caller's class that no other class of its module defines (a subclass in another module overrides no
private name), the ``forward`` of a submodule whose class the run holds (built in ``__init__``, by a base in another
module or a factory: ``submodule_forward.py``), or of a submodule of a parameter annotated with a package class
(``annotated_receivers.py``). A decorated function or method is no target: its wrapper decides what runs.
"""

from __future__ import annotations

import ast

import attrs

from codegen.index import scan
from codegen.index.annotated_receivers import annotated_class, private_method
from codegen.index.returned import bound_once
from codegen.index.returns import home_of
from codegen.index.submodule_forward import submodule_forward

__all__ = ["Scope", "call_target", "home_scope"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class Scope:
    """Where a function lives: the run's index, its module (run key and tree), its class and ``self``."""

    index: object
    module: str
    tree: ast.Module
    owner: str | None = None
    receiver: str | None = None


def call_target(scope: Scope, func: ast.expr) -> tuple[Scope, _Function] | None:
    """The function a call of ``func`` goes to: a module-level one, a method of the caller's class, a submodule's
    forward (see above)."""
    if isinstance(func, ast.Name):
        return home_scope(scope, func.id)
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    if func.value.id != scope.receiver or scope.owner is None:
        return _given_submodule(scope, func)
    method = private_method(scope.tree, scope.owner, func.attr)
    if method is not None:
        own = method.args.args[0].arg if method.args.args else None
        return (attrs.evolve(scope, receiver=own), method) if not method.decorator_list and own else None
    made = scope.index.submodules.get(f"{scope.module}:{scope.owner}", {}).get(func.attr)  # type: ignore[attr-defined]
    found = (home_scope(scope, made, "forward") if made is not None else None) or _elsewhere(scope, func.attr)
    return found if found is not None and not found[1].decorator_list else None


def home_scope(scope: Scope, name: str, method: str | None = None) -> tuple[Scope, _Function] | None:
    """The module-level function ``name`` (or ``method`` of the class ``name``), bound once, as ``scope``'s module
    sees it: its own, or one it imports from its package where the run holds that module."""
    imported = scope.index.imports.get(scope.module, {}).get(name)  # type: ignore[attr-defined]
    if imported is not None and not imported[0].startswith("."):
        return None
    home = home_of(scope.index, scope.module, name)
    tree = scope.tree if home == scope.module else _held(scope.index, home)
    target = imported[1] if imported is not None else name
    if tree is None or target not in bound_once(tree):
        return None
    fn = scan.functions_by_qualname(tree).get(f"{target}.{method}" if method else target)
    if fn is None or (method is None and fn.decorator_list):
        return None
    receiver = fn.args.args[0].arg if method and fn.args.args else None
    return Scope(index=scope.index, module=home, tree=tree, owner=target if method else None, receiver=receiver), fn


def _given_submodule(scope: Scope, func: ast.Attribute) -> tuple[Scope, _Function] | None:
    """``m.attr``'s ``forward``, or the private method ``m._helper``, ``m`` a parameter annotated with a class of the
    package (``annotated_receivers``)."""
    name = annotated_class(scope.tree, func)
    imported = scope.index.imports.get(scope.module, {}).get(name) if name else None  # type: ignore[attr-defined]
    if name is None or (imported is not None and not imported[0].startswith(".")):
        return None
    home = home_of(scope.index, scope.module, name)
    original = imported[1] if imported is not None else name
    made = scope.index.submodules.get(f"{home}:{original}", {}).get(func.attr)  # type: ignore[attr-defined]
    tree = scope.tree if home == scope.module else _held(scope.index, home)
    method = private_method(tree, original, func.attr) if tree is not None and not made else None  # ``m._helper(c)``
    if tree is not None and method is not None:
        own = method.args.args[0].arg if method.args.args and not method.decorator_list else None
        return (Scope(index=scope.index, module=home, tree=tree, owner=original, receiver=own), method) if own else None
    found = home_scope(Scope(index=scope.index, module=home, tree=tree), made, "forward") if made and tree else None
    return found if found is not None and not found[1].decorator_list else None


def _elsewhere(scope: Scope, attr: str) -> tuple[Scope, _Function] | None:
    """The ``forward`` of a submodule a base in another module, or a factory, makes (``submodule_forward.py``)."""
    found = submodule_forward(scope.index, scope.module, scope.owner or "", attr)
    if found is None:
        return None
    module, owner, tree, fn = found
    return Scope(index=scope.index, module=module, tree=tree, owner=owner, receiver=fn.args.args[0].arg), fn


def _held(index: object, home: str) -> ast.Module | None:
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    return tree_of(home) if tree_of is not None else None
