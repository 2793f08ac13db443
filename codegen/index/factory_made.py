"""The class a factory function of the run makes, for a submodule ``__init__`` builds by calling it.

``self.up = linear(d, 4 * d)`` with ``def linear(d_in, d_out) -> nn.Linear: return nn.Linear(d_in, d_out)``, in the
same module or imported from another module of the run (``from .shapes import linear``, ``from pkg.shapes import
linear``, ``import pkg.shapes as s`` then ``s.linear(...)``, a name an ``__init__`` re-exports): the index records the
name called (``scan.submodule_assignments``), as for a class, so ``self.up(x)`` reached no class: its ``forward``
was nobody's, and what it writes of its arguments was read as nothing (a factory of the module) or as everything (an
imported one). :func:`made_by` reads that name as the function it is and says which class it makes, named as the
module that defines the function spells it.

Only the plain shape is read: a module-level ``def`` the module binds once, with no decorator (a wrapper may return
anything), no ``yield`` or ``await``, whose every ``return`` of its own scope is a call of one class, or a local the
function binds once, by a plain assignment, to such a call (``layer = C(d); init(layer); return layer``): the class
named by a class its module defines once or by a certain import (a certain ``from`` import, or a module's attribute),
not by a name the function binds itself (``def make(cls): return cls()``). A call of another such factory is
followed (``_DEPTH`` deep). The return annotation alone says nothing here: an instance of a subclass satisfies ``->
nn.Linear``, and its ``forward`` may be another. Anything else, and a factory in a module the run does not hold (a
file transformed alone, with no such file on disk), stays unknown: calls through the attribute stay on their caller's
stream, as before.
"""

from __future__ import annotations

import ast

from codegen.index.per_index import per_run
from codegen.index.returned import bound_once
from codegen.lower.flow.exprs import binding_name, scope_nodes
from codegen.lower.flow.import_chains import absolute_imports, run_package

__all__ = ["bound_value", "made_by"]

_DEPTH = 8  # factories (and re-exports) followed one inside another at most
_Made = tuple[str, str]  # (the run key of the module naming the class, the class as it spells it)


def made_by(index: object, module: str, called: str) -> _Made | None:
    """The class that a call of ``called`` (a dotted name as the module ``module`` spells it) makes, where
    ``called`` names a factory function of the run (see above); None for a class, or anything not known."""
    known = _known(index)
    if (module, called) not in known:
        found = _function(index, module, called, 0)
        known[(module, called)] = _made(index, *found, 0) if found is not None else None
    return known[(module, called)]


@per_run
def _known(index: object) -> dict[tuple[str, str], _Made | None]:
    """The answers given for the run of ``index`` (the last run asked about only)."""
    return {}


def _made(index: object, home: str, fn: ast.FunctionDef, depth: int) -> _Made | None:
    """The class ``fn`` (a factory of the module ``home``) makes: a class it names, or another factory's."""
    made = _returned(fn)
    inner = _function(index, home, made, depth + 1) if made is not None and depth < _DEPTH else None
    if inner is not None:
        return _made(index, *inner, depth + 1)
    return (home, made) if made is not None and depth < _DEPTH and _names_class(index, home, made) else None


def _function(index: object, module: str, dotted: str, depth: int) -> tuple[str, ast.FunctionDef] | None:
    """(module, function) of the factory ``dotted`` names in ``module``: defined there, or imported from a module
    of the run (followed through re-exports)."""
    tree = _tree(index, module)
    root, *rest = dotted.split(".")
    if tree is None or depth > _DEPTH:
        return None
    own = _defined(tree, root) if not rest else None
    if own is not None:
        return module, own
    chain = _imports(index, module, tree).get(root)
    full = (*chain, *rest) if chain is not None else ()
    for cut in range(len(full) - 1, 0, -1):
        key = index.key_of(".".join(full[:cut]))  # type: ignore[attr-defined]
        if _tree(index, key) is not None:
            return _function(index, key, full[-1], depth + 1) if cut == len(full) - 1 else None
    return None


def _defined(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    """The plain module-level function ``name``, bound by its ``def`` alone."""
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name and not n.decorator_list]
    return found[0] if len(found) == 1 and name in bound_once(tree) else None


def _returned(fn: ast.FunctionDef) -> str | None:
    """The one class (dotted, as the module spells it) that every ``return`` of ``fn`` calls; None otherwise."""
    nodes = scope_nodes(fn)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in nodes):
        return None
    values = [bound_value(fn, n.value, nodes) for n in nodes if isinstance(n, ast.Return)]
    called = {_called(v) for v in values}
    if len(called) != 1 or None in called:
        return None
    made = called.pop()
    return made if made is not None and made.split(".")[0] not in _locals(fn, nodes) else None


def bound_value(fn: ast.FunctionDef, value: ast.expr | None, nodes: tuple[ast.AST, ...]) -> ast.expr | None:
    """What a returned local holds: ``layer = C(...); init(layer); return layer`` returns the object ``C(...)`` made,
    where ``layer`` is bound once in the function, by that plain assignment (not a parameter, not stored again, not
    bound by an import, a definition or an ``except``, not declared ``nonlocal`` by a nested function); any other
    value as it is."""
    if not isinstance(value, ast.Name) or _otherwise_bound(fn, value.id, nodes):
        return value
    stores = [n for n in nodes if isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load)]
    binding = [n for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] in stores]
    return binding[0].value if len(stores) == 1 and len(binding) == 1 else value


def _otherwise_bound(fn: ast.FunctionDef, name: str, nodes: tuple[ast.AST, ...]) -> bool:
    """``name`` is a parameter of ``fn``, or bound in it by other than an assignment (here or by a nested scope)."""
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    named = {n for node in nodes if node is not fn and (n := binding_name(node)) is not None}
    declared = {n for node in ast.walk(fn) if isinstance(node, (ast.Nonlocal, ast.Global)) for n in node.names}
    return name in params | named | declared


def _called(value: ast.expr | None) -> str | None:
    """``Cls(...)`` or ``mod.Cls(...)``: the dotted name called."""
    if not isinstance(value, ast.Call):
        return None
    parts: list[str] = []
    func = value.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    return ".".join([func.id, *reversed(parts)]) if isinstance(func, ast.Name) else None


def _locals(fn: ast.FunctionDef, nodes: tuple[ast.AST, ...]) -> frozenset[str]:
    """The names ``fn`` binds itself (its parameters, what it stores, imports, defines, declares global)."""
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    stored = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    named = {name for n in nodes if n is not fn and (name := binding_name(n)) is not None}
    declared = {name for n in nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    return frozenset(params | stored | named | declared)


def _names_class(index: object, module: str, dotted: str) -> bool:
    """``dotted`` is read in the module as a class it defines once, or through a certain import."""
    tree = _tree(index, module)
    root = dotted.split(".")[0]
    if tree is None:
        return False
    if "." not in dotted and any(isinstance(n, ast.ClassDef) and n.name == root for n in tree.body):
        return root in bound_once(tree)
    return _imports(index, module, tree).get(root) is not None


def _imports(index: object, module: str, tree: ast.Module) -> dict[str, tuple[str, ...] | None]:
    """The module's imports spelled absolute (``import_chains.absolute_imports``), read once per module and run."""
    known = _absolute(index)
    if module not in known:
        known[module] = absolute_imports(tree, run_package(index, module))
    return known[module]


@per_run
def _absolute(index: object) -> dict[str, dict[str, tuple[str, ...] | None]]:
    return {}


def _tree(index: object, module: str) -> ast.Module | None:
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    return tree_of(module) if tree_of is not None else None
