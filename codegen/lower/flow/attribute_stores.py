"""The values a method stores on its object's attributes, read where the value is spelled: the one reading of a
method's stores that every reader deciding what an attribute can hold shares.

``self.rope_dim = shape["rope_dim"]`` stores ``shape["rope_dim"]``; ``self.a, self.b = x, y`` pairs each target
with its value; an unpacking of anything else stores a value not read (None). ``self.n += v`` stores ``v``: the
new value is the old one combined with ``v``, so it is a plain number (``scalar_attributes.py``) or construction
state (``object_attributes.py``) exactly when the attribute's other stores and ``v`` are; both readers decide by
this one value (they used to differ: the value, or unknown). ``del self.a`` stores None; ``setattr(self, "a", v)``
stores ``v`` on ``a``, as do ``nn.Module``'s ``self.register_buffer("a", v)``, ``register_parameter``,
``register_module`` and ``add_module`` (they bind ``self.a`` through the module's own tables: no assignment spells
it); a computed name may store on any attribute (``*``, value not read). An augmented store is marked: an
attribute stored only so holds what it was first given where the methods read do not say. Each store
comes with the node that makes it, so a reader can tell where in the method it is (``rebound_state.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import attrs

from codegen.index import scan
from codegen.index.walked import walked_of

__all__ = ["Store", "object_stores", "paired_targets"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_REGISTERS = frozenset({"register_buffer", "register_parameter", "register_module", "add_module"})  # nn.Module's


@attrs.frozen
class Store:
    """One store to an attribute of the object: ``attr`` (``*``: a ``setattr`` whose name is computed), the value
    stored (None: not read), the node making it (the target, or the ``setattr`` call), and whether it combines
    the old value with the one stored (``self.n += v``)."""

    attr: str
    value: ast.expr | None
    node: ast.AST
    augmented: bool = False


def object_stores(fn: _Function, receiver: str) -> Iterator[Store]:
    """Each store to ``receiver.attr`` in ``fn`` (nested scopes included), with its value (see above)."""
    paired: dict[int, ast.expr | None] = {}
    augmented: set[int] = set()
    for stmt in walked_of(fn, ast.stmt):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                paired.update((id(t), v) for t, v in paired_targets(target, stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            paired[id(stmt.target)] = stmt.value
            augmented.add(id(stmt.target))
    for node in walked_of(fn, ast.Attribute):
        if not isinstance(node.ctx, ast.Load) and _is(node.value, receiver):
            value = ast.Constant(None) if isinstance(node.ctx, ast.Del) else paired.get(id(node))
            yield Store(node.attr, value, node, id(node) in augmented)
    for call in walked_of(fn, ast.Call):
        if scan.dotted_name(call.func) == "setattr" and call.args and _is(call.args[0], receiver):
            yield _named(call, call.args[1:])
        elif _registers(call, receiver):
            yield _named(call, call.args)


def _registers(call: ast.Call, receiver: str) -> bool:
    """``self.register_buffer(...)`` and the other ``nn.Module`` methods binding an attribute by its name."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in _REGISTERS and _is(func.value, receiver)


def _named(call: ast.Call, args: list[ast.expr]) -> Store:
    """``setattr(self, "a", v)`` / ``self.register_buffer("a", v)`` (``args``: the name and the value) stores ``v`` on
    ``a``; a computed name, or one given by keyword, may be any attribute."""
    name = args[0] if args else None
    value = args[1] if len(args) > 1 else None
    if isinstance(name, ast.Constant) and isinstance(name.value, str) and not call.keywords:
        return Store(name.value, value, call)
    return Store("*", None, call)


def _is(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def paired_targets(target: ast.expr, value: ast.expr | None) -> list[tuple[ast.expr, ast.expr | None]]:
    """Each plain target of an assignment with the value it gets (``a, b = x, y`` pairs them; an unpacked call:
    unknown, None)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [None] * len(target.elts)
        if len(values) != len(target.elts):
            values = [None] * len(target.elts)
        return [p for t, v in zip(target.elts, values, strict=True) for p in paired_targets(t, v)]
    return [(target, value)]
