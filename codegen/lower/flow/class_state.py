"""What code does to the attributes of one plain object: which it reads before storing, which it surely stores.

A side body given an object the caller changes (vllm_qwen3_dbo's dispatcher: ``preprocess_and_permtute1`` on the
main stream leaves ``permuted_tokens`` on it, ``dispatch_alltoall`` reads it on the communication stream) reads
tensors the caller's stream made, and may drop them (``_release``). Keeping exactly those alive takes their names:
the attributes the side code reads before it stores them itself (``global_input_tokens``, stored by the side body
first, is its own stream's). This module reads them off the object's class, in evaluation order, through the
class's own methods (``self.m()``), with no walk of the object at run time (a walk makes ``torch.compile`` guard on
the attributes the object has, which change on its first call, so the second call compiles again).

An :class:`Effect` is what a run of some code does to the object: ``needs`` (read before stored, on some path),
``sure`` (of those, read on every path: the object has them whenever the code runs, or the code raises),
``stores`` (stored on every path) and ``drops`` (stored or deleted on some path: the object lets go of what the
attribute held, which may then die while another stream still reads it). ``None`` anywhere means the code uses
the object in a way not read here (passed on, ``getattr``, a method the class does not define, a base class): the
caller then cannot name its state.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.index.scan import functions_of

__all__ = ["ClassState", "Effect", "sequence"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Use = Callable[[ast.expr], "Effect | None | bool"]  # the effect of a use of the object, False: not the object


@attrs.frozen
class Effect:
    needs: frozenset[str] = frozenset()
    sure: frozenset[str] = frozenset()
    stores: frozenset[str] = frozenset()
    drops: frozenset[str] = frozenset()

    def then(self, later: Effect, *, surely: bool = True) -> Effect:
        """This, then ``later`` (which runs on every path when ``surely``)."""
        needs = self.needs | (later.needs - self.stores)
        sure = self.sure | (later.sure - self.stores) if surely else self.sure
        stores = self.stores | later.stores if surely else self.stores
        return Effect(needs=needs, sure=sure, stores=stores, drops=self.drops | later.drops)


def sequence(body: list[ast.stmt], use: Use) -> Effect | None:
    """The effect of ``body`` on the object ``use`` recognizes: its statements in order, surely up to the first
    compound statement or jump (everything from there on may not run)."""
    effect, surely = Effect(), True
    for stmt in body:
        surely = surely and not isinstance(stmt, (ast.If, ast.For, ast.While, ast.Try, ast.Match, ast.AsyncFor))
        found = _statement(stmt, use)
        if found is None:
            return None
        effect = effect.then(found, surely=surely)
        surely = surely and not isinstance(stmt, (ast.Return, ast.Raise, ast.Break, ast.Continue))
    return effect


def _statement(stmt: ast.stmt, use: Use) -> Effect | None:
    """One statement, its value before its targets; every node after the nodes under it (the order Python
    evaluates a call's arguments before running the call)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None if _mentions(stmt, use) else Effect()
    value = getattr(stmt, "value", None) if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None
    first = [value] if isinstance(value, ast.expr) else []
    effect: Effect | None = Effect()
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Attribute) and use(stmt.target) is not False:
        effect = Effect(needs=frozenset({stmt.target.attr}), sure=frozenset({stmt.target.attr}))  # read, then stored
    for part in [*first, *(c for c in ast.iter_child_nodes(stmt) if c is not value)]:
        effect = _node(part, use, effect)
    return effect


def _node(node: ast.AST, use: Use, effect: Effect | None) -> Effect | None:
    """``effect`` followed by what evaluating ``node`` does to the object (post-order)."""
    if effect is None:
        return None
    found = use(node) if isinstance(node, ast.expr) else False
    if found is not False:
        return effect.then(found) if isinstance(found, Effect) else None
    for child in ast.iter_child_nodes(node):
        effect = _node(child, use, effect)
    return effect


def _mentions(node: ast.AST, use: Use) -> bool:
    return any(isinstance(n, ast.expr) and use(n) is not False for n in ast.walk(node))


class ClassState:
    """The effect of each method of a class without bases on its object (``self``), through its own methods."""

    def __init__(self, cls: ast.ClassDef) -> None:
        plain = not cls.bases and not cls.keywords and not cls.decorator_list
        self.methods: dict[str, _Function] = {f.name: f for f in functions_of(cls)} if plain else {}
        self.plain = plain
        self._known: dict[str, Effect | None] = {}

    def method(self, name: str) -> Effect | None:
        """The effect of calling ``name`` (None: not a plain method of the class, or it uses its object opaquely)."""
        if name not in self._known:
            self._known[name] = None  # a recursive call reads as opaque
            fn = self.methods.get(name)
            ok = fn is not None and not fn.decorator_list and bool(fn.args.args)
            self._known[name] = sequence(fn.body, self.use_of(fn.args.args[0].arg)) if ok else None  # type: ignore[union-attr]
        return self._known[name]

    def use_of(self, name: str) -> Use:
        """How a node uses the object held by the name ``name``: ``name.attr`` read or stored, ``name.m(...)``
        called (its arguments evaluated first), anything else opaque."""
        return lambda node: self.use(node, lambda n: isinstance(n, ast.Name) and n.id == name)

    def use(self, node: ast.expr, holds: Callable[[ast.expr], bool]) -> Effect | None | bool:
        """What ``node`` does to the object when ``holds`` says which expressions hold it (False: not it)."""
        if holds(node):
            return None  # the object itself, neither an attribute's nor a method's
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and holds(node.func.value):
            before = _arguments(node, holds, self)
            called = self.method(node.func.attr)
            return before.then(called) if before is not None and called is not None else None
        if not (isinstance(node, ast.Attribute) and holds(node.value)):
            return False
        if node.attr in self.methods:
            return None  # a bound method taken, not called here
        if isinstance(node.ctx, ast.Load):
            return Effect(needs=frozenset({node.attr}), sure=frozenset({node.attr}))
        return Effect(stores=frozenset({node.attr}), drops=frozenset({node.attr}))


def _arguments(call: ast.Call, holds: Callable[[ast.expr], bool], state: ClassState) -> Effect | None:
    """The effect of evaluating a method call's arguments, in order."""
    effect: Effect | None = Effect()
    for part in [*call.args, *(k.value for k in call.keywords)]:
        effect = _node(part, lambda n: state.use(n, holds), effect)
    return effect
