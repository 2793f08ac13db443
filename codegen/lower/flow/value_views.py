"""Which local a value is a view of, and the parts of a value that is a choice or a display of others.

``x[i]``, ``x.view(n, -1)[0]``, ``x.chunk(k)`` and ``x.T`` are views of ``x`` whatever their arguments: an op whose
ATen schema returns views of ``self`` (``schema.aliases_self``), or a tensor property whose ATen function does
(``.T`` calls ``numpy_T``, ``.H`` ``matrix_H``, ``.data`` ``detach``; ``.mT``, ``.mH``, ``.real``, ``.imag`` are
their own). ``a if c else b``, ``a or b`` and ``(a, b[i])`` may be each of their parts: a display element by element,
a choice whole (``result_aliases.py`` reads each part as a value of its own). A new container of another's items
holds what that one holds: ``list(xs)``, ``tuple(sorted(xs))``, ``xs.copy()``, ``xs + [b]`` (a concatenation where
an operand is a display or such a copy; of two names, ``binding_aliases.py`` knows which are containers).
"""

from __future__ import annotations

import ast
from collections.abc import Container
from typing import TypeGuard

from codegen.lower.flow.schema import aliases_self

__all__ = ["DISPLAYS", "choices", "copied", "joined", "operands", "passed_whole", "view_property", "viewed"]

_PROPERTIES = {"T": "numpy_T", "H": "matrix_H", "data": "detach"}  # a property -> the ATen function it calls
_COPYING = frozenset({"list", "tuple", "sorted", "reversed", "set", "frozenset", "dict", "iter"})  # keep the items
DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)


def viewed(node: ast.expr, imported: Container[str]) -> str | None:
    """The local ``node`` takes a view of, whatever the view's arguments (``x[i]``, ``x.view(n, -1)[0]``,
    ``x.chunk(k)``, ``x.T``); None where the chain passes another attribute (the object's state:
    ``state_views.py``) or a call that is no view."""
    if not isinstance(node, (ast.Subscript, ast.Call)) and not view_property(node):
        return None
    while isinstance(node, (ast.Subscript, ast.Call)) or view_property(node):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Attribute) or not aliases_self(node.func.attr):
                return None
            node = node.func.value
        else:
            node = node.value
    return node.id if isinstance(node, ast.Name) and node.id not in imported else None


def view_property(node: ast.expr) -> TypeGuard[ast.Attribute]:
    """``x.T``, ``x.mT``, ``x.real``, ``x.data``: a tensor property whose ATen function returns a view of ``self``."""
    return isinstance(node, ast.Attribute) and aliases_self(_PROPERTIES.get(node.attr, node.attr))


def choices(value: ast.expr) -> list[tuple[int | None, ast.expr]] | None:
    """The parts ``value`` may be, each with its element of a display (None: the whole); None for no choice or
    display (a display with a starred element is one whole). A new container of a value's items holds what it
    holds, whole: ``list(xs)``, ``xs.copy()``, ``xs + [b]`` (``copied``)."""
    parts = copied(value)
    if parts is not None:
        return [(None, part) for part in parts]
    if isinstance(value, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in value.elts):
        return [(at, e) for at, e in enumerate(value.elts)]
    if isinstance(value, (ast.Tuple, ast.List)):
        return [(None, e.value if isinstance(e, ast.Starred) else e) for e in value.elts]
    if isinstance(value, ast.IfExp):
        return [(None, value.body), (None, value.orelse)]
    if isinstance(value, ast.BoolOp):
        return [(None, v) for v in value.values]
    return None


def copied(value: ast.expr) -> list[ast.expr] | None:
    """The values whose items the new container ``value`` holds: the arguments of ``list``, ``tuple``, ``sorted``,
    ... (``_COPYING``), the object of a ``.copy()``, the operands of a chain of ``+`` or ``*`` where one is a
    container (``xs + [b]``, ``[a] * n``, each operand of ``xs + zs + [b]``); None where ``value`` is no such
    copy."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _COPYING:
        return list(value.args)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "copy":
        return [value.func.value] if not value.args and not value.keywords else None
    if joined(value):
        return operands(value) if _holds_container(value) else None
    return None


def joined(node: ast.expr) -> TypeGuard[ast.BinOp]:
    """``a + b`` or ``a * b``: a new container where an operand is one (``xs + [b]``, ``[a] * n``)."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult))


def operands(value: ast.BinOp) -> list[ast.expr]:
    """The operands of the chain of ``+`` and ``*`` ``value`` (``xs + zs + [b]``: the three, each a part the new
    container may hold), read without recursion (a sum of 600 terms is one chain)."""
    found: list[ast.expr] = []
    stack: list[ast.expr] = [value]
    while stack:
        node = stack.pop()
        if joined(node):
            stack += [node.right, node.left]
        else:
            found.append(node)
    return found


def _holds_container(value: ast.expr) -> bool:
    """An operand of the ``+``/``*`` chain ``value`` is a display or a copy: the chain makes a container. Read
    without recursion (a sum of 600 terms is one chain)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, DISPLAYS):
            return True
        if joined(node):
            stack += [node.left, node.right]
        elif node is not value and copied(node) is not None:
            return True
    return False


def passed_whole(stmt: ast.AST, name: str) -> bool:
    """``stmt`` hands the container ``name`` whole to a call (``torch.cat(xs)``, ``self.f(xs)``): an op may read
    every item. An item read (``xs[0]``) or a list operation (``ys += xs``) keeps no other item alive."""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    given = [
        v.value if isinstance(v, ast.Starred) else v for c in calls for v in (*c.args, *(k.value for k in c.keywords))
    ]
    return any(isinstance(v, ast.Name) and v.id == name for v in given)
