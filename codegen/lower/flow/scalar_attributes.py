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
(``self.n += 1`` alone: its first value is not read). ``self.n = cfg.n`` with ``cfg: MoEConfig`` is plain where
that field of the run's dataclass is (``dataclass_fields.py``, asked per run: what is kept per class reads it alone).
"""

from __future__ import annotations

import ast
import functools
from collections import Counter
from collections.abc import Callable

from codegen.index import scan
from codegen.index.per_index import per_run
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.attribute_stores import object_stores
from codegen.lower.flow.dataclass_fields import field_read, plain_field
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.int_uses import config_read, configuration, int_used
from codegen.lower.flow.plain_values import operands, plain_annotation, plain_call
from codegen.lower.flow.read_classes import read_chain

__all__ = ["field_stores", "plain_attributes", "plain_state", "plain_stores"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Fields = Callable[[str, str], bool]  # (a class named in the module, its field) -> the field is plain


def plain_state(functions: object, owner: str | None) -> frozenset[str]:
    """The attributes surely plain in the objects of class ``owner`` of the module ``functions`` reads (none where
    the run does not read every class they are made of); read once per class and run."""
    if owner is None or not isinstance(functions, ModuleFunctions):
        return frozenset()
    known = _known(functions.index)
    found = known.get((functions.key, owner))
    if found is None:
        chain = read_chain(functions, owner)
        fields = functools.partial(plain_field, functions)
        found = known[(functions.key, owner)] = plain_attributes(chain, fields) if chain is not None else frozenset()
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


@per_node
def field_stores(cls: ast.ClassDef) -> dict[str, frozenset[tuple[str, str]]]:
    """The attributes every store of which in ``cls`` is plain or reads a field of an ``__init__`` parameter
    annotated with a class (``self.n = cfg.n``, ``cfg: MoEConfig``), with those (class, field) reads: plain where
    every field is (``dataclass_fields.py``, asked per run). Read once per class: the class alone decides it."""
    reading = _Class(cls)
    found = {attr: reading.field_reads(attr) for attr in reading.stores if attr != "*" and not reading.attribute(attr)}
    return {attr: reads for attr, reads in found.items() if reads}


def plain_attributes(chain: list[ast.ClassDef], fields: _Fields | None = None) -> frozenset[str]:
    """The attributes surely plain in objects of a class whose own class and bases are ``chain`` (see above);
    ``fields`` says which fields of a class named in the first class's module are plain."""
    stores = [_with_fields(cls, fields if k == 0 else None) for k, cls in enumerate(chain)]
    other = frozenset().union(*(o for _, o in stores))
    return frozenset() if "*" in other else frozenset().union(*(p for p, _ in stores)) - other


def _with_fields(cls: ast.ClassDef, fields: _Fields | None) -> tuple[frozenset[str], frozenset[str]]:
    plain, other = plain_stores(cls)
    typed = {a for a, reads in field_stores(cls).items() if fields is not None and all(fields(*r) for r in reads)}
    return plain | typed, other - typed


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

    def field_reads(self, attr: str) -> frozenset[tuple[str, str]] | None:
        """The (class, field) reads ``attr``'s stores that are not plain make (``self.n = cfg.n``, ``cfg:
        MoEConfig``: ``("MoEConfig", "n")``); None where one is neither."""
        reads = set()
        for value, method in self.stores.get(attr, []) if attr in self.first else [(None, None)]:
            if value is not None and method is not None and self._stored(attr, value, method):
                continue
            read = field_read(value, method.params, method.annotations) if value is not None and method else None
            if read is None:
                return None
            reads.add(read)
        return frozenset(reads)

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
            return all(self.value(part, method) for part in operands(node))
        if isinstance(node, ast.Call):
            return plain_call(node)
        return self._name(node, method)

    def _name(self, node: ast.expr, method: _Method) -> bool:
        """A name, an attribute or an item that surely holds a plain value."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            annotation = method.annotations.get(node.value.id)
            return annotation is not None and plain_annotation(annotation, item=True)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == method.receiver:
            return self.attribute(node.attr)
        if not isinstance(node, ast.Name):
            return False
        if node.id in method.annotations:
            return plain_annotation(method.annotations[node.id], item=False)
        key = f"{id(method)}:{node.id}"
        if node.id not in method.locals or key in self._reading:
            return False
        self._reading.add(key)
        try:
            return self.value(method.locals[node.id], method)
        finally:
            self._reading.discard(key)
