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
from codegen.lower.flow.init_builds import Built, arguments, bare, stores

__all__ = ["ObjectState", "object_state"]

_ANY = frozenset({"*"})
_Chain = list[ast.ClassDef]


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
        if any(_is(n, self.receiver) for a in arguments(call) for n in bare(a)):
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
    counts: dict[str, int] = {}
    built: dict[str, Built] = {}
    for cls in chain:
        for attr, value in stores(cls):
            counts[attr] = counts.get(attr, 0) + 1
            if value is not None:
                built[attr] = value
    if "*" in counts:
        return ObjectState(receiver=receiver)
    clean = {attr: value for attr, value in built.items() if counts[attr] == 1}
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


def _groups(clean: dict[str, Built]) -> dict[str, frozenset[str]]:
    """Each attribute -> the attributes it is one group with: a submodule and the attributes (and the locals of
    ``__init__`` made by a call) its arguments hand on (``_handed``)."""
    edges: dict[str, set[str]] = {}
    for attr, built in clean.items():
        for node in (n for a in arguments(built.call) for n in _handed(a)):
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


def _closure(start: str, edges: dict[str, set[str]]) -> frozenset[str]:
    seen, todo = {start}, [start]
    while todo:
        for other in edges.get(todo.pop(), set()) - seen:
            seen.add(other)
            todo.append(other)
    return frozenset(seen)


def _attribute_chain(node: ast.expr, receiver: str) -> str | None:
    """The first attribute of a chain rooted at ``receiver`` (``self.a.b.c`` -> ``a``); None for any other."""
    first = None
    while isinstance(node, ast.Attribute):
        first, node = node.attr, node.value
    return first if _is(node, receiver) else None


def _on_super(func: ast.expr) -> bool:
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Call) and scan.dotted_name(func.func) == "super"


def _is(node: ast.AST, receiver: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == receiver
