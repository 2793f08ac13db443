"""Which attributes of a class's objects surely hold no tensor: numbers, strings and tuples of them, whatever code
runs.

A side body giving ``self.rope_dim`` to a function the run cannot read (``rotary(q, cos, sin, self.rope_dim)``)
gives it no memory to write: where every store to the attribute, in every method of the class and of its bases,
is a plain value, the attribute is no state a call writes in place (``call_state_writes.py``). A plain value is a
literal, a parameter annotated as one (``dim: int``, an item of ``shape: dict[str, int]``), a tensor's size,
``len``/``int``/... of anything, another such attribute (``self.head_dim ** -0.5``), a local bound once to such a
value, and arithmetic, comparisons and choices of them; a value ``__init__`` reads from a configuration object
(``config.num_heads // tp``) where the class uses the attribute as a whole number (``int_uses.py``). A class with
a base the run cannot read (``unread_methods.py``: outside the run, torch's aside) may store anything there: none
of its attributes is plain; nor where a ``setattr`` on the object computes the name (``setattr(self, "a", v)``
and ``self.register_buffer("a", v)`` store ``v`` on ``a``: ``attribute_stores.py``); nor one only augmented
(``self.n += 1`` alone: its first value is not read).
"""

from __future__ import annotations

import ast
from collections import Counter

from codegen.index import scan
from codegen.index.per_index import per_run
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.attribute_stores import object_stores
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.int_uses import config_read, configuration, int_used
from codegen.lower.flow.read_classes import read_chain

__all__ = ["plain_attributes", "plain_state", "plain_stores"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_PLAIN = frozenset({"int", "float", "bool", "str", "bytes"})
_PLAIN_CALLS = frozenset({"len", "int", "float", "bool", "str"})  # a plain value whatever they are given
_SIZES = frozenset({"size", "dim", "numel", "ndimension", "element_size", "stride"})


def plain_state(functions: object, owner: str | None) -> frozenset[str]:
    """The attributes surely plain in the objects of class ``owner`` of the module ``functions`` reads (none where
    the run does not read every class they are made of); read once per class and run."""
    if owner is None or not isinstance(functions, ModuleFunctions):
        return frozenset()
    known = _known(functions.index)
    found = known.get((functions.key, owner))
    if found is None:
        chain = read_chain(functions, owner)
        found = known[(functions.key, owner)] = plain_attributes(chain) if chain is not None else frozenset()
    return found


@per_run
def _known(index: object) -> dict[tuple[str, str], frozenset[str]]:
    """The classes' plain attributes read for the run of ``index`` (the last run asked about only; its partial
    index and its final one share them: what a class stores reads no call site)."""
    return {}


@per_node
def plain_stores(cls: ast.ClassDef) -> tuple[frozenset[str], frozenset[str]]:
    """(the attributes every store of which in ``cls``'s own methods is a plain value, the attributes stored
    otherwise: ``*`` for a ``setattr`` on the object); an attribute in neither is not stored by the class. Read
    once per class."""
    reading = _Class(cls)
    plain = {attr for attr in reading.stores if attr != "*" and reading.attribute(attr)}
    return frozenset(plain), frozenset(reading.stores.keys() - plain)


def plain_attributes(chain: list[ast.ClassDef]) -> frozenset[str]:
    """The attributes surely plain in objects of a class whose own class and bases are ``chain`` (see above)."""
    stores = [plain_stores(cls) for cls in chain]
    other = frozenset().union(*(o for _, o in stores))
    return frozenset() if "*" in other else frozenset().union(*(p for p, _ in stores)) - other


class _Method:
    """One method's names: its object, its parameters' annotations (of those it does not bind again), its locals
    bound once (with their values)."""

    def __init__(self, fn: _Function, receiver: str) -> None:
        args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        stored = Counter(n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load))
        self.receiver = receiver
        self.params = (
            frozenset(a.arg for a in args if a.arg != receiver and a.arg not in stored)
            if fn.name == "__init__"
            else frozenset()
        )
        self.annotations = {a.arg: a.annotation for a in args if a.annotation is not None and a.arg not in stored}
        self.configs = frozenset(p for p in self.params if configuration(self.annotations.get(p)))
        self.locals = {
            s.targets[0].id: s.value
            for s in walked_of(fn, ast.Assign)
            if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and stored[s.targets[0].id] == 1
        }


class _Class:
    """What each method of a class stores to its object's attributes, and which of them are surely plain."""

    def __init__(self, cls: ast.ClassDef) -> None:
        self.stores: dict[str, list[tuple[ast.expr | None, _Method]]] = {}
        self.first: set[str] = set()  # given a value of its own by some store (not ``+=`` only)
        for fn in scan.functions_of(cls):
            if fn.args.args:  # a method with its object (a static one stores none of it)
                method = _Method(fn, fn.args.args[0].arg)
                for store in object_stores(fn, method.receiver):
                    self.stores.setdefault(store.attr, []).append((store.value, method))
                    self.first.update(() if store.augmented else (store.attr,))
        self._known: dict[str, bool] = {}
        self._int_used = int_used(cls)
        self._reading: set[str] = set()

    def attribute(self, attr: str) -> bool:
        """Every store of ``attr`` in the class is plain (one read inside its own reading is not)."""
        if attr not in self._known:
            self._known[attr] = False
            values = self.stores.get(attr, [])
            self._known[attr] = attr in self.first and all(
                v is not None and self._stored(attr, v, m) for v, m in values
            )
        return self._known[attr]

    def _stored(self, attr: str, value: ast.expr, method: _Method) -> bool:
        """A store of ``attr`` is plain: its value is, or ``__init__`` reads it from a parameter annotated as a
        transformers configuration, or from any parameter where the class uses ``attr`` where only a whole number is
        taken (``int_uses.py``)."""
        if self.value(value, method) or config_read(value, method.configs, lambda part: self.value(part, method)):
            return True
        return attr in self._int_used and config_read(value, method.params, lambda part: self.value(part, method))

    def value(self, node: ast.expr, method: _Method) -> bool:
        """``node`` (in ``method``) surely evaluates to a plain value (see above)."""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, (ast.Tuple, ast.BoolOp, ast.BinOp, ast.Compare, ast.UnaryOp, ast.IfExp)):
            return all(self.value(part, method) for part in _parts(node))
        if isinstance(node, ast.Call):
            return _plain_call(node)
        return self._name(node, method)

    def _name(self, node: ast.expr, method: _Method) -> bool:
        """A name, an attribute or an item that surely holds a plain value."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            annotation = method.annotations.get(node.value.id)
            return annotation is not None and _plain_annotation(annotation, item=True)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == method.receiver:
            return self.attribute(node.attr)
        if not isinstance(node, ast.Name):
            return False
        if node.id in method.annotations:
            return _plain_annotation(method.annotations[node.id], item=False)
        key = f"{id(method)}:{node.id}"
        if node.id not in method.locals or key in self._reading:
            return False
        self._reading.add(key)
        try:
            return self.value(method.locals[node.id], method)
        finally:
            self._reading.discard(key)


def _parts(node: ast.expr) -> list[ast.expr]:
    """The operands of a tuple, an operation, a comparison or a choice (an ``if`` test's value is not taken)."""
    if isinstance(node, ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.BoolOp):
        return list(node.values)
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    assert isinstance(node, ast.IfExp)
    return [node.body, node.orelse]


def _plain_call(call: ast.Call) -> bool:
    """``len(x)``, ``int(x)``, ``x.size(0)``: a plain value whatever ``x`` is."""
    if isinstance(call.func, ast.Name):
        return call.func.id in _PLAIN_CALLS
    return isinstance(call.func, ast.Attribute) and call.func.attr in _SIZES and bool(call.args)


def _plain_annotation(annotation: ast.expr, *, item: bool) -> bool:
    """``int`` (``item``: ``dict[str, int]``, ``tuple[int, ...]``, ``list[int]``: its items are plain)."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):  # ``int | None``
        parts = [annotation.left, annotation.right]
        return all(_none(p) or _plain_annotation(p, item=item) for p in parts) and not all(map(_none, parts))
    if not item:
        return isinstance(annotation, ast.Name) and annotation.id in _PLAIN
    if not isinstance(annotation, ast.Subscript):
        return False
    elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    held = elements[-1:] if scan.dotted_name(annotation.value) in ("dict", "Mapping") else elements
    return all(_plain_annotation(e, item=False) or isinstance(e, ast.Constant) for e in held)


def _none(annotation: ast.expr) -> bool:
    return isinstance(annotation, ast.Constant) and annotation.value is None
