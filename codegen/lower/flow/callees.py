"""Which stream function a call in a caller's body calls, and what stands for the callee's ``self`` there.

A call is resolved when the run index knows its callee for sure: ``self.method(...)`` of the caller's
class, ``self.sub(...)`` / ``self.sub.method(...)`` for a submodule assigned in ``__init__``,
``f(...)`` / ``mod.f(...)`` / ``Class.static(...)`` through the module's own definitions and imports,
``Class(...)(x)``, and ``m.sub(...)`` / ``m.sub.method(...)`` for a name annotated with a class of the
run (``m: "DeepseekV2AttentionMLA"``) whose ``__init__`` assigns ``self.sub``: the submodule's class is
read where that ``__init__`` names it (in the caller's own module, or through ``class_in``,
:mod:`codegen.index.written_class`), and ``layer(...)`` / ``layer.method(...)`` for the target of a loop
over a layer list of the caller's object (``for i, layer in enumerate(self.layers)``, every element one
class: :mod:`codegen.index.elements`, :mod:`~codegen.lower.flow.loop_targets`); what an attribute holds is
read by :mod:`~codegen.lower.flow.submodule_keys`. Every other call of a stream function is unresolved: the
callee then keeps its caller safe as it is (it runs on its caller's stream), which only costs overlap.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.index import scan
from codegen.index.scan import dotted_name
from codegen.lower.flow.annotated_locals import annotations_of
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.held_submodules import held_key, self_chain
from codegen.lower.flow.imports import Binding
from codegen.lower.flow.loop_targets import element_targets
from codegen.lower.flow.name_keys import annotated_class, class_key, global_key
from codegen.lower.flow.submodule_keys import annotated_submodule_key, element_key, submodule_key

__all__ = ["Resolved", "Resolver"]


@attrs.frozen(kw_only=True)
class Resolved:
    key: str  # the callee's run-index key
    receiver: str | None  # source of the object that is the callee's ``self``; None: not nameable here
    explicit_receiver: bool = False  # ``Class.method(obj, ...)``: the first argument is the receiver


@attrs.define(eq=False)
class Resolver:
    """Resolves the calls of one caller function; ``callees`` and ``submodules`` come from the run index."""

    module: str
    owner: str | None  # the caller's class
    callees: dict[str, object]
    submodules: dict[str, dict[str, str]]
    bindings: dict[str, Binding]
    elements: dict[str, dict[str, str]] = attrs.field(factory=dict, kw_only=True)  # "module:Class" -> {attr: class}
    module_names: frozenset[str]  # names the module defines at top level (classes, functions, assignments)
    function: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # the caller (None: no locals, no annotations)
    receiver: str | None = "self"  # the caller's own receiver parameter
    key_of: Callable[[str], str] = str  # dotted module name -> its run key (they differ for same-name files)
    # (module, name written there) -> the run key of the class it names; None: an annotated name's submodules
    # stay unresolved
    class_in: Callable[[str, str], str | None] | None = None
    # (owner "module:Class", attribute, method) -> the key of that method of the class a base of the owner in
    # another module assigns to the attribute (``inherited_callees.py``); None: such submodules stay unresolved
    inherited: Callable[[str, str, str], str | None] | None = None
    _locals: frozenset[str] | None = attrs.field(default=None, init=False)
    _annotated: dict[str, ast.expr] | None = attrs.field(default=None, init=False)
    _loops: dict[str, str] | None = attrs.field(default=None, init=False)

    @property
    def local_names(self) -> frozenset[str]:
        """Names the caller binds, its parameters included (read when a call first needs them)."""
        if self._locals is None:
            fn = self.function
            found = {*scan.params_of(fn), *(n for stmt in fn.body for n in bound_names(stmt))} if fn else set()
            self._locals = frozenset(found)
        return self._locals

    @property
    def annotations(self) -> dict[str, ast.expr]:
        """The caller's annotated parameters and locals (read when a call first needs them)."""
        if self._annotated is None:
            self._annotated = annotations_of(self.function) if self.function is not None else {}
        return self._annotated

    @property
    def loop_lists(self) -> dict[str, str]:
        """Loop targets of the caller that only ever hold an element of one of its object's layer lists."""
        if self._loops is None:
            lists = self.elements.get(f"{self.module}:{self.owner}", {})
            self._loops = element_targets(self.function, self.receiver, lists) if self.function and lists else {}
        return self._loops

    def resolve(self, call: ast.Call) -> Resolved | None:
        func = call.func
        if isinstance(func, ast.Name):
            return self._name(func.id)
        if isinstance(func, ast.Attribute):
            return self._attribute(func, call)
        if isinstance(func, ast.Call):  # ``Shared(...)(x)``: a fresh instance, called at once
            cls = class_key(self, func.func)
            return Resolved(key=cls, receiver=None) if cls else None
        return None

    def _name(self, name: str) -> Resolved | None:
        if name in self.annotations:  # ``shared(x)`` with ``shared: SharedExpert``
            cls = annotated_class(self, name)
            key = f"{cls}.forward" if cls else None
            return Resolved(key=key, receiver=name) if key in self.callees else None
        if name in self.loop_lists:  # ``layer(x)``, ``for layer in self.layers``
            key = element_key(self, name)
            return Resolved(key=key, receiver=name) if key else None
        if name in self.local_names:
            return None
        key = global_key(self, name)
        return Resolved(key=key, receiver=None) if key in self.callees else None

    def _attribute(self, func: ast.Attribute, call: ast.Call) -> Resolved | None:
        base, attr = func.value, func.attr
        if self._is_self(base):
            return self._on_self(attr)
        if isinstance(base, ast.Attribute) and self._is_self(base.value):  # ``self.sub.method(...)``
            cls = submodule_key(self, base.attr, method=attr)
            if cls is not None:
                return Resolved(key=cls, receiver=f"self.{base.attr}")
        if chain := self_chain(base, self._is_self):  # ``self.block.indexer(x)``, ``self.mid.block.indexer.prep(x)``
            held = held_key(self, chain, attr)
            return Resolved(key=held[0], receiver=held[1]) if held else None
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id in self.annotations:
            sub = annotated_submodule_key(self, base.value.id, base.attr, attr)  # ``m.sub.forward(x)``, ``m: Owner``
            return Resolved(key=sub, receiver=f"{base.value.id}.{base.attr}") if sub else None
        if isinstance(base, ast.Name) and base.id in self.annotations:  # ``experts.phase(x)``, ``experts: Shared``
            cls = annotated_class(self, base.id)
            key = f"{cls}.{attr}" if cls else None
            if key in self.callees:
                return Resolved(key=key, receiver=base.id)
            sub = annotated_submodule_key(self, base.id, attr)  # ``m.sub(x)``, ``m: Owner``
            return Resolved(key=sub, receiver=f"{base.id}.{attr}") if sub else None
        if isinstance(base, ast.Name) and base.id in self.loop_lists:  # ``layer.dispatch(x)`` over ``self.layers``
            key = element_key(self, base.id, attr)
            return Resolved(key=key, receiver=base.id) if key else None
        dotted = dotted_name(base)
        if dotted is None or dotted.split(".")[0] in self.local_names:
            return None
        return self._qualified(dotted, attr, call)

    def _on_self(self, attr: str) -> Resolved | None:
        own = f"{self.module}:{self.owner}.{attr}"
        if self.owner and own in self.callees:
            return Resolved(key=own, receiver="self")
        cls = submodule_key(self, attr)
        return Resolved(key=cls, receiver=f"self.{attr}") if cls else None

    def _qualified(self, dotted: str, attr: str, call: ast.Call) -> Resolved | None:
        """``mod.f(...)`` through an imported module, or ``Class.method(...)``."""
        binding = self.bindings.get(dotted.split(".")[0])
        if binding is not None:  # ``import pkg.mod as m`` or ``from . import mod`` (a submodule of the package)
            head = binding.module if binding.name is None else f"{binding.module}.{binding.name}".lstrip(".")
            module = ".".join([head, *dotted.split(".")[1:]])
            key = f"{self.key_of(module)}:{attr}"
            if key in self.callees:
                return Resolved(key=key, receiver=None)
        return self._class_method(dotted, attr, call)

    def _class_method(self, dotted: str, attr: str, call: ast.Call) -> Resolved | None:
        """``Class.method(...)``: a method not marked static takes its receiver as the first argument."""
        cls = global_key(self, dotted) if "." not in dotted else None
        key = f"{cls}.{attr}" if cls else None
        if key not in self.callees:
            return None
        receiver = call.args[0] if call.args else None
        explicit = _callee_static(self.callees[key]) is False
        spelled = receiver.id if explicit and isinstance(receiver, ast.Name) else None
        return Resolved(key=key, receiver=spelled, explicit_receiver=explicit)

    def _is_self(self, node: ast.expr) -> bool:
        return self.receiver is not None and isinstance(node, ast.Name) and node.id == self.receiver


def _callee_static(callee: object) -> bool:
    return bool(getattr(callee, "static", False))
