"""Small ``ast`` queries for the run index: a module's functions, a class's submodules, a function's parameters.

The queries of other kinds live in modules of their own and are named here too, so a reader asks ``scan``:
statements and the module's imports (``blocks``), calls (``calls``), dotted names and what assignments
store (``paths``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index.blocks import imported_names, statements_breadth_first
from codegen.index.calls import callee_name, calls_in
from codegen.index.paths import assignment_targets, assigns_path, dotted_name, is_self_attr, on_path, stored_paths
from codegen.index.walked import per_node, walked_of

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
    "own_call",
    "own_names",
    "params_of",
    "statements_breadth_first",
    "stored_paths",
    "submodule_assignments",
]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def functions_of(cls: ast.ClassDef) -> list[_Function]:
    return [node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def functions_by_qualname(tree: ast.Module) -> dict[str, _Function]:
    """Top-level functions and methods by qualname (a decorated class's forward is ``Class.forward``): a dict of
    the caller's own, copied from the one kept per tree (every stage asks of each module again and again)."""
    return dict(_functions_by_qualname(tree))


@per_node
def _functions_by_qualname(tree: ast.Module) -> dict[str, _Function]:
    return {f"{owner}.{fn.name}" if owner else fn.name: fn for owner, fn in all_functions(tree)}


def all_functions(tree: ast.Module) -> Iterator[tuple[str | None, _Function]]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for fn in functions_of(node):
                yield node.name, fn
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, node


@per_node  # read once per class (names only); not to be changed
def submodule_assignments(cls: ast.ClassDef) -> dict[str, str]:
    """``self.attr = SomeClass(...)`` (or ``mod.SomeClass(...)``, or one element of ``self.a, self.b = A(), B()``)
    in ``__init__``: {attr: "SomeClass"}, for each attribute whose every store there makes that one class
    (``None`` aside: a call through it is guarded or fails as written). An attribute stored two classes, or a value
    of unknown class (``MoE() if moe else MLP()``, a factory's result, another object), may hold another object
    at a call: it is left out, and calls through it stay on their caller's stream."""
    surely: dict[str, str] = {}
    for attr, found in _made_in_init(cls).items():
        classes = {c for c in found if c is not None and c != _NONE}
        if None not in found and len(classes) == 1:
            surely[attr] = classes.pop()
    return surely


def _made_in_init(cls: ast.ClassDef) -> dict[str, set[str | None]]:
    """attr -> what each store to ``self.attr`` in ``__init__`` makes (``_class_made``)."""
    made: dict[str, set[str | None]] = {}
    for fn in functions_of(cls):
        if fn.name == "__init__":
            own = own_names(fn)
            for node in statements_breadth_first(fn):
                for attr, value in _self_stores(node):
                    made.setdefault(attr, set()).add(_class_made(value, own))
    return made


@per_node
def own_names(fn: _Function) -> frozenset[str]:
    """The names ``fn`` binds itself (its parameters, what it stores or imports): a call of one (``def
    __init__(self, layer=Bump): self.mid = layer()``) makes what the caller hands it, not the module's ``layer``."""
    params = {a.arg for a in walked_of(fn.args, ast.arg)}
    stored = {n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load)}
    imported = {(n.asname or n.name).partition(".")[0] for n in walked_of(fn, ast.alias)}
    return frozenset(params | stored | imported)


_NONE = "None"
_OWN = "__init__."


def _self_stores(node: ast.AST) -> Iterator[tuple[str, ast.expr | None]]:
    """(attribute, value stored) for each ``self.attr`` an assignment stores to (None: a value not written out)."""
    value = getattr(node, "value", None)
    for target in assignment_targets(node):
        elements: list[tuple[ast.expr, ast.expr | None]] = [(target, value)]
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            elements = list(zip(target.elts, value.elts))
        for stored, element in elements:
            if is_self_attr(stored):
                yield stored.attr, None if isinstance(node, ast.AugAssign) else element
            elif isinstance(stored, (ast.Tuple, ast.List)):
                yield from ((e.attr, None) for e in ast.walk(stored) if isinstance(e, ast.expr) and is_self_attr(e))


def _class_made(value: ast.expr | None, own: frozenset[str]) -> str | None:
    """The class ``value`` makes (``SomeClass(...)``), ``_NONE`` for ``None``, None when it cannot be told. A call of
    a factory function (``linear(d, d)``) is recorded by the name called too: which class it makes is read where the
    run holds the function (``factory_made.py``), never here. A call of a name ``__init__`` binds itself (``own``: a
    parameter handed a class or a factory) is recorded under ``_OWN`` (``__init__.layer``), a name no module binds,
    so no reader takes it for the module's ``layer`` (``own_call``)."""
    if isinstance(value, ast.Constant) and value.value is None:
        return _NONE
    called = dotted_name(value.func) if isinstance(value, ast.Call) else None
    return _OWN + called if called is not None and called.partition(".")[0] in own else called


def own_call(written: str) -> bool:
    """``written`` (a submodule's class as recorded) is a call of a name ``__init__`` binds itself."""
    return written.startswith(_OWN)


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
