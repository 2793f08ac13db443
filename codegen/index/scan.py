"""Small ``ast`` queries for the run index: decorators, submodules and calls."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from typing import TypeGuard

from codegen.index.children import children
from codegen.index.walked import walked_of

__all__ = [
    "all_functions",
    "assignment_targets",
    "assigns_path",
    "callee_name",
    "calls_in",
    "dotted_name",
    "forward_params",
    "functions_by_qualname",
    "functions_of",
    "imported_names",
    "on_path",
    "params_of",
    "statements_breadth_first",
    "stored_paths",
    "submodule_assignments",
]

_Function = ast.FunctionDef | ast.AsyncFunctionDef

_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)

_KINDS: tuple[type[ast.AST], ...] = (ast.Module, *ast.stmt.__subclasses__(), ast.ExceptHandler, ast.match_case)
_BLOCK_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f in ("body", "orelse", "finalbody", "handlers", "cases")) for kind in _KINDS
}


def statements_breadth_first(tree: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(tree)`` restricted to statements (and handlers, match cases), in the same order.

    A statement's parent is always a statement, a handler, a case or the module, so the restriction
    keeps ``ast.walk``'s relative order (breadth first) without visiting a single expression.
    """
    queue: deque[ast.AST] = deque([tree])
    while queue:
        node = queue.popleft()
        yield node
        for name in _BLOCK_FIELDS.get(type(node), ()):
            queue.extend(child for child in getattr(node, name) if isinstance(child, _BLOCKS))


def _decorator_name(node: ast.expr) -> str | None:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return None


def functions_of(cls: ast.ClassDef) -> list[_Function]:
    return [node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def functions_by_qualname(tree: ast.Module) -> dict[str, _Function]:
    """Top-level functions and methods by qualname (a decorated class's forward is ``Class.forward``)."""
    return {f"{owner}.{fn.name}" if owner else fn.name: fn for owner, fn in all_functions(tree)}


def all_functions(tree: ast.Module) -> Iterator[tuple[str | None, _Function]]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for fn in functions_of(node):
                yield node.name, fn
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, node


def submodule_assignments(cls: ast.ClassDef) -> dict[str, str]:
    """``self.attr = SomeClass(...)`` (or ``mod.SomeClass(...)``) in ``__init__``: {attr: "SomeClass"}."""
    found: dict[str, str] = {}
    for fn in functions_of(cls):
        if fn.name != "__init__":
            continue
        for node in statements_breadth_first(fn):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            cls_name = dotted_name(node.value.func)
            for target in node.targets:
                if _is_self_attr(target) and cls_name is not None:
                    found[target.attr] = cls_name
    return found


def assignment_targets(node: ast.AST) -> list[ast.expr]:
    """What an assignment stores to (``a = b = f()``, ``a += 1``, ``a: int = 0``); nothing for other nodes."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


def assigns_path(node: ast.AST, dotted: str) -> bool:
    """``node`` assigns the root of ``dotted`` or an attribute along its path (``self.on = False`` for
    ``self.on``, ``cfg = ...`` for ``cfg.multi.enabled``)."""
    return on_path(stored_paths(node), dotted)


def stored_paths(node: ast.AST) -> set[str]:
    """The dotted names the assignments under ``node`` store to (``self.on``, ``cfg``)."""
    stores = walked_of(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
    return {t for sub in stores for t in map(dotted_name, assignment_targets(sub)) if t}


def on_path(stored: set[str] | frozenset[str], dotted: str) -> bool:
    """``stored`` holds the root of ``dotted`` or an attribute along its path."""
    parts = dotted.split(".")
    return any(".".join(parts[:i]) in stored for i in range(1, len(parts) + 1))


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _is_self_attr(node: ast.expr) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def callee_name(call: ast.Call) -> tuple[bool, str | None]:
    """``self.x(...)`` -> (True, "x"); ``f(...)`` -> (False, "f"); anything else -> (False, None)."""
    if _is_self_attr(call.func):
        return True, call.func.attr
    if isinstance(call.func, ast.Name):
        return False, call.func.id
    return False, None


def _bound_call(stmt: ast.stmt) -> ast.Call | None:
    """The call whose result a plain statement binds (or discards), if that is all it does."""
    if isinstance(stmt, ast.Expr) or (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and all(isinstance(t, ast.Name) for t in _names(stmt.targets[0]))
    ):
        value: ast.expr | None = stmt.value
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        value = stmt.value
    else:
        return None
    return value if isinstance(value, ast.Call) else None


def _names(target: ast.expr) -> list[ast.expr]:
    return list(target.elts) if isinstance(target, (ast.Tuple, ast.List)) else [target]


def calls_in(fn: _Function) -> Iterator[tuple[ast.Call, bool]]:
    """Every call in ``fn`` (not in nested functions or classes), and whether its statement binds it."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.stmt):
            bound = _bound_call(node)
            if bound is not None:
                yield bound, True
                stack.append(bound.func)
                stack.extend(bound.args)
                stack.extend(k.value for k in bound.keywords)
                continue
        if isinstance(node, ast.Call):
            yield node, False
        stack.extend(children(node))


def imported_names(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """``from <spec> import Name as local`` in the module's scope (under ``if``/``try`` too):
    {local: (spec, Name)}, with leading dots for relative imports. A name imported from two
    places, or bound by another statement of the module's scope too, is left out: it cannot be bound with certainty.
    """
    found: dict[str, tuple[str, str]] = {}
    other: set[str] = set()
    for node in _module_scope(tree):
        if isinstance(node, ast.ImportFrom):
            spec = "." * node.level + (node.module or "")
            for a in node.names:
                local = a.asname or a.name
                if found.get(local, (spec, a.name)) != (spec, a.name):
                    other.add(local)
                found[local] = (spec, a.name)
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Import)):
            other.update(
                [node.name]
                if not isinstance(node, ast.Import)
                else [(a.asname or a.name).split(".")[0] for a in node.names]
            )
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                other.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return {local: origin for local, origin in found.items() if local not in other}


def _module_scope(tree: ast.Module) -> Iterator[ast.stmt]:
    """The statements of the module's own scope: its body, and the blocks of its if, try, with and loops."""
    stack: list[ast.AST] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            for name in reversed(_BLOCK_FIELDS.get(type(node), ())):
                stack.extend(reversed(getattr(node, name)))


def params_of(fn: _Function) -> tuple[str, ...]:
    """Every parameter name of ``fn``, in order (``*args`` and ``**kwargs`` included)."""
    args = fn.args
    found = [
        *args.posonlyargs,
        *args.args,
        *([args.vararg] if args.vararg else []),
        *args.kwonlyargs,
        *([args.kwarg] if args.kwarg else []),
    ]
    return tuple(a.arg for a in found)


def forward_params(cls: ast.ClassDef) -> tuple[str, ...]:
    """The parameter names of the class's ``forward`` (none when it defines no forward)."""
    forwards = [fn for fn in functions_of(cls) if fn.name == "forward"]
    return params_of(forwards[0]) if forwards else ()
