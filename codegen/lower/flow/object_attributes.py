"""Which attributes of a class's objects may hold a tensor made per call, and which the object surely has.

A keep names ``dispatcher.permuted_tokens`` only where the attribute may hold a tensor a call made: one some method
other than ``__init__`` stores (construction state, ``self.top_k``, lives as long as the object) with a value that
is not surely a plain number (``self.num_tokens = hidden_states.shape[0]``; a ``None`` says nothing either way).
``__init__``'s sure stores (and the class body's names) are attributes every object has.
"""

from __future__ import annotations

import ast

from codegen.index.scan import functions_of
from codegen.lower.flow.attribute_stores import object_stores
from codegen.lower.flow.class_state import ClassState, Effect

__all__ = ["constructed", "per_call"]

_NUMBERS = frozenset({"int", "float", "bool", "str"})
_SIZES = frozenset({"len", "int", "float", "bool", "str", "round"})


def constructed(state: ClassState, cls: ast.ClassDef) -> frozenset[str]:
    """The attributes every object of ``cls`` has: stored on every path of ``__init__``, or named in the class
    body."""
    init = state.method("__init__") if "__init__" in state.methods else Effect()
    body = {t.id for s in cls.body if isinstance(s, (ast.Assign, ast.AnnAssign)) for t in _targets(s)}
    return (init.stores if init is not None else frozenset()) | frozenset(body)


def per_call(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes a method other than ``__init__`` stores, with a value that may be a tensor (``self.n += v``
    by ``v``: ``attribute_stores.py``)."""
    found: dict[str, bool] = {}
    for fn in functions_of(cls):
        if fn.name == "__init__" or not fn.args.args:
            continue
        numbers = {a.arg for a in fn.args.args if _number(a.annotation)}
        for store in object_stores(fn, fn.args.args[0].arg):
            kind = _kind(store.value, numbers) if store.attr != "*" else None
            if kind is not None:
                found[store.attr] = found.get(store.attr, False) or kind
    return frozenset(attr for attr, tensor in found.items() if tensor)


def _kind(value: ast.expr | None, numbers: set[str]) -> bool | None:
    """True: may be a tensor; False: surely a number or string; None: ``None`` (says nothing)."""
    if isinstance(value, ast.Constant):
        return None if value.value is None else False
    if isinstance(value, ast.Name) and value.id in numbers:
        return False
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and value.value.attr == "shape":
        return False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _SIZES:
        return False
    return True


def _number(annotation: ast.expr | None) -> bool:
    return isinstance(annotation, ast.Name) and annotation.id in _NUMBERS


def _targets_of(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.Name]:
    return [t for t in _targets_of(node) if isinstance(t, ast.Name)]
