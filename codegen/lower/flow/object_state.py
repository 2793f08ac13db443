"""What a call on the caller's stream may change of the caller's object, and what a stream call touches of it.

``reuse.py`` lets a call wait for an earlier fork record when the caller's stream did nothing in between that the
call needs; a call through the object in between (``self.q_norm(x)``) may change what the call's body reads of the
object. A method of the object may change anything of it (``*``). A submodule's call (``self.q_norm(x)``,
``self.cv_wq_a.matmul(x)``) changes only that submodule, and what it writes in place through its arguments (read
elsewhere: ``helper_writes.py``, ``imported_writes.py``). A submodule here is an attribute that ``__init__`` of the
caller's class or of one of its bases (``codegen/index/class_chain.py``, across the run's files) assigns an
instance of one class named at module level, built from arguments that do not hand it the object (``self`` passed
whole, or read inside a lambda or comprehension), and that no other method of those classes, nor another class of
the chain, stores. A submodule built from another attribute (``self.cv_wq_a = CVLinearWrapper(self.wq_a)``, or a
local that ``__init__`` made by a call and gave to both) holds it: the two are one group, and a call changes, and a
body reads, its whole group. Values ``__init__`` passes on from its parameters (sizes, a config) are taken to be
nothing a submodule's call changes, as the GE rule ``ge_layers.py`` takes them. Where a base is the package's but
the run does not hold its module, nothing of the object is known: every call through it may change anything.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

import attrs

from codegen.index import scan
from codegen.index.class_chain import bases_of, class_of
from codegen.index.walked import walked_of

__all__ = ["ObjectState", "object_state"]

_ANY = frozenset({"*"})
_Chain = list[ast.ClassDef]


@attrs.frozen
class _Built:
    """How ``__init__`` builds an attribute: the call, the name of its object there, its locals made by calls."""

    call: ast.Call
    receiver: str
    made: frozenset[str]


@attrs.frozen
class ObjectState:
    """The caller's object as calls through it see it (see above)."""

    receiver: str
    groups: dict[str, frozenset[str]] = attrs.Factory(dict)  # an attribute -> the attributes one group with it
    submodules: frozenset[str] = frozenset()  # the attributes that surely hold a submodule

    def changes(self, node: ast.AST) -> frozenset[str]:
        """The attributes the calls of ``node`` may change (``*``: any)."""
        found: set[str] = set()
        for call in walked_of(node, ast.Call):
            found |= self._call_changes(call)
        return frozenset(found)

    def touched(self, attributes: Iterable[str]) -> frozenset[str]:
        """The groups of ``attributes`` (``*`` stays: any)."""
        found: set[str] = set()
        for attr in attributes:
            found |= _ANY if attr == "*" else self.groups.get(attr, frozenset({attr}))
        return frozenset(found)

    def _call_changes(self, call: ast.Call) -> frozenset[str]:
        if any(_is(n, self.receiver) for a in _arguments(call) for n in _bare(a)):
            return _ANY  # the object handed on whole
        if _on_super(call.func):
            return _ANY  # a method of a base
        chain = _attribute_chain(call.func, self.receiver)
        if chain is None:
            return frozenset()
        return self.touched([chain]) if chain in self.submodules else _ANY


def object_state(index: object, module: str, tree: ast.Module, owner: str, receiver: str) -> ObjectState:
    """The object of a method of class ``owner`` of ``module`` (``tree``), called ``receiver`` there."""
    chain = _chain(index, module, tree, owner)
    if chain is None:
        return ObjectState(receiver=receiver)
    stores: dict[str, int] = {}
    built: dict[str, _Built] = {}
    for cls in chain:
        for attr, value in _stores(cls):
            stores[attr] = stores.get(attr, 0) + 1
            if value is not None:
                built[attr] = value
    if "*" in stores:
        return ObjectState(receiver=receiver)
    clean = {attr: value for attr, value in built.items() if stores[attr] == 1}
    return ObjectState(receiver=receiver, groups=_groups(clean), submodules=frozenset(clean))


def _chain(index: object, module: str, tree: ast.Module, owner: str) -> _Chain | None:
    """The class and its bases the run holds; None where a base of the package is not held."""
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    if owner not in local:
        return None
    chain: _Chain = [local[owner]]
    todo = [(module, local[owner])]
    while todo:
        home, cls = todo.pop()
        for base in _bases(index, home, cls, module, local):
            if base is None:
                return None
            if base[1] not in chain:
                chain.append(base[1])
                todo.append(base)
    return chain


def _bases(
    index: object, home: str, cls: ast.ClassDef, module: str, local: dict[str, ast.ClassDef]
) -> Iterator[tuple[str, ast.ClassDef] | None]:
    """The bases of ``cls`` (of the module ``home``) the run holds, a base in the caller's module read in its tree
    (``local``: its classes); None for a base of the package the run does not hold."""
    if home == module:
        yield from ((home, local[b.id]) for b in cls.bases if isinstance(b, ast.Name) and b.id in local)
    for base in bases_of(index, home, cls):
        if base is None:
            yield None
        elif base[0] == module and base[1] in local:
            yield module, local[base[1]]
        elif (held := class_of(index, *base)) is not None:
            yield base[0], held


def _stores(cls: ast.ClassDef) -> Iterator[tuple[str, _Built | None]]:
    """(attribute, how ``__init__`` builds it where that makes a submodule) for each store to the object;
    ``("*", None)`` for a ``setattr`` on it."""
    for fn in scan.functions_of(cls):
        receiver = fn.args.args[0].arg if fn.args.args else None
        made = _call_locals(fn)
        for node in walked_of(fn, ast.Attribute):
            if not isinstance(node.ctx, ast.Load) and _is(node.value, receiver):
                value = _value_of(fn, node) if fn.name == "__init__" and receiver else None
                built = _Built(value, receiver, made) if value is not None else None  # type: ignore[arg-type]
                yield node.attr, built if built is not None and _class_call(fn, built) else None
        for call in walked_of(fn, ast.Call):
            if scan.dotted_name(call.func) == "setattr" and call.args and _is(call.args[0], receiver):
                yield "*", None


def _value_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, target: ast.Attribute) -> ast.Call | None:
    """The call stored to ``target`` by a plain ``self.x = Class(...)`` (one target, or one element of a tuple
    assigned a tuple of as many values); None for anything else."""
    for stmt in walked_of(fn, ast.Assign):
        if len(stmt.targets) != 1:
            continue
        pairs = [(stmt.targets[0], stmt.value)]
        if isinstance(stmt.targets[0], ast.Tuple) and isinstance(stmt.value, ast.Tuple):
            pairs = list(zip(stmt.targets[0].elts, stmt.value.elts, strict=False))
        for stored, value in pairs:
            if stored is target and isinstance(value, ast.Call):
                return value
    return None


def _class_call(fn: ast.FunctionDef | ast.AsyncFunctionDef, built: _Built) -> bool:
    """``Class(...)`` or ``nn.Linear(...)`` of a name ``__init__`` does not bind itself (not a factory it is given),
    its arguments handing on no part of the object but its attributes."""
    dotted = scan.dotted_name(built.call.func)
    bound = {*scan.params_of(fn), *(n.id for n in walked_of(fn, ast.Name) if isinstance(n.ctx, ast.Store))}
    if dotted is None or dotted.split(".")[0] in bound:
        return False
    arguments = _arguments(built.call)
    nested = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    whole = any(_is(n, built.receiver) for a in arguments for n in _bare(a))
    return not whole and not any(isinstance(n, nested) for a in arguments for n in ast.walk(a))


def _groups(clean: dict[str, _Built]) -> dict[str, frozenset[str]]:
    """Each attribute -> the attributes it is one group with: a submodule and the attributes (and the locals of
    ``__init__`` made by a call) its arguments hand on (``_handed``)."""
    edges: dict[str, set[str]] = {}
    for attr, built in clean.items():
        for node in (n for a in _arguments(built.call) for n in _handed(a)):
            other = _attribute_chain(node, built.receiver) if isinstance(node, ast.Attribute) else None
            other = other or (f"local:{node.id}" if isinstance(node, ast.Name) and node.id in built.made else None)
            if other is not None and other != attr:
                edges.setdefault(attr, set()).add(other)
                edges.setdefault(other, set()).add(attr)
    return {attr: _closure(attr, edges) for attr in edges}


def _handed(node: ast.expr) -> Iterator[ast.expr]:
    """The parts of an argument that may hand an object on as it is (``self.wq_a``, ``self.w[0]``, an item of a
    tuple, what a call returns), not through arithmetic or a comparison, which make a new value
    (``self.heads * self.head_dim``), nor an index."""
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)):
        return
    yield node
    children = [node.value] if isinstance(node, ast.Subscript) else list(ast.iter_child_nodes(node))
    for child in children:
        if isinstance(child, ast.expr):
            yield from _handed(child)


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _closure(start: str, edges: dict[str, set[str]]) -> frozenset[str]:
    seen, todo = {start}, [start]
    while todo:
        for other in edges.get(todo.pop(), set()) - seen:
            seen.add(other)
            todo.append(other)
    return frozenset(seen)


def _call_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The locals ``fn`` binds to what a call returns (``w = nn.Parameter(...)``)."""
    return frozenset(
        {
            t.id
            for stmt in walked_of(fn, ast.Assign)
            if isinstance(stmt.value, ast.Call)
            for t in stmt.targets
            if isinstance(t, ast.Name)
        }
    )


def _attribute_chain(node: ast.expr, receiver: str) -> str | None:
    """The first attribute of a chain rooted at ``receiver`` (``self.a.b.c`` -> ``a``); None for any other."""
    first = None
    while isinstance(node, ast.Attribute):
        first, node = node.attr, node.value
    return first if _is(node, receiver) else None


def _bare(node: ast.expr) -> Iterator[ast.Name]:
    """The names ``node`` reads other than as the object of an attribute (``self`` in ``f(self)``, not in
    ``self.x``)."""
    objects = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    yield from (n for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in objects)


def _on_super(func: ast.expr) -> bool:
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Call) and scan.dotted_name(func.func) == "super"


def _is(node: ast.AST, receiver: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == receiver
