"""Which names a statement writes in place, read from the source (``transform`` never imports torch).

A tensor's memory is written, not rebound, by: an augmented assignment to it (``h += 1``), a store into an item or
attribute of it (``h[0] = 0``, ``cache.k[...] = v``), a call of one of its methods whose ATen schema writes
``self`` (``Tensor(a!) self``, read from ``schema.py``: ``h.add_(1)``, ``h[0].index_copy_(...)``,
``h.record_stream(s)``; a custom op the table does not hold, when spelled with a trailing underscore), a call that
takes it as ``out=``, and a call that takes ``inplace=True`` with it first (``F.relu(h, inplace=True)``). The name
written is the root of the chain, through views (``kv[0].copy_`` and ``kv.transpose(0, 1).copy_`` write ``kv``:
``view_roots.py``). Names bound to views of another (``k, v = kv``) write it too: ``param_writes.py`` follows them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.index import scan
from codegen.index.children import children
from codegen.index.walked import per_node, walked, walked_of
from codegen.lower.flow import schema
from codegen.lower.flow.item_stores import containers, item_stored
from codegen.lower.flow.state_views import first_attribute, state_locals
from codegen.lower.flow.view_roots import alias_root

__all__ = ["inplace_writes", "reads_state", "state_reads", "writes_state"]


# Python's own containers change in place through these methods (``acc.append(t)``, ``cache.update(...)``).
_MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "remove", "discard", "reverse"}
)  # not ``add``/``sort``: tensors have out-of-place methods of those names


def _writes_self(call: ast.Call) -> bool:
    """The method writes its object: its ATen schema says so (``Tensor(a!) self``); a name the table does not
    hold (a custom op) does when spelled as ATen spells its in-place ops (``npu_op_``); a container mutator."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    known = schema.writes_self(func.attr)
    if known is not None:
        return known or func.attr in _MUTATORS
    return (func.attr.endswith("_") and not func.attr.startswith("_")) or func.attr in _MUTATORS


def _call_writes(call: ast.Call) -> Iterable[str | None]:
    if _writes_self(call):
        yield alias_root(call.func.value)  # type: ignore[attr-defined]
    for keyword in call.keywords:
        if keyword.arg == "out":
            targets = keyword.value.elts if isinstance(keyword.value, (ast.Tuple, ast.List)) else [keyword.value]
            yield from (alias_root(t) for t in targets)
        elif (
            keyword.arg == "inplace"
            and isinstance(keyword.value, ast.Constant)
            and keyword.value.value is True
            and call.args
        ):
            yield alias_root(call.args[0])


def inplace_writes(stmt: ast.AST, *, nested: bool = False) -> frozenset[str]:
    """The names whose memory ``stmt`` may write in place (lambdas excluded, and nested functions and classes
    unless ``nested``); walked once per statement (the analysis asks again on each pass over a loop). A store
    into an item of a Python container the function owns (``xs[i] = t``, ``item_stores.py``) writes no memory."""
    found = _nested_writes(stmt) if nested else _own_writes(stmt)
    return frozenset(name for name, store in found if store is None or name not in item_stored(store))


@per_node
def _own_writes(stmt: ast.AST) -> frozenset[tuple[str, ast.AST | None]]:
    return frozenset(_inplace_writes(stmt, nested=False))


@per_node
def _nested_writes(stmt: ast.AST) -> frozenset[tuple[str, ast.AST | None]]:
    return frozenset(_inplace_writes(stmt, nested=True))


def _inplace_writes(stmt: ast.AST, *, nested: bool) -> set[tuple[str, ast.AST | None]]:
    """Each name written, with the assignment whose target stores into it (None: another kind of write)."""
    found: set[tuple[str | None, ast.AST | None]] = set()
    stack: list[ast.AST] = [stmt]
    skipped = (ast.Lambda,) if nested else (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    while stack:
        node = stack.pop()
        if isinstance(node, skipped) and node is not stmt:
            continue
        store = node if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        found.update((name, store) for name in _node_writes(node))
        stack.extend(children(node))
    return {(name, store) for name, store in found if name}


def _node_writes(node: ast.AST) -> Iterable[str | None]:
    """The roots of what ``node`` itself writes in place: an augmented target, a store into an item or attribute,
    a call's in-place write."""
    if isinstance(node, ast.AugAssign):
        return [alias_root(node.target)]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [alias_root(t) for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))]
    return _call_writes(node) if isinstance(node, ast.Call) else []


def writes_state(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, receiver: str | None
) -> tuple[frozenset[str], frozenset[str]]:
    """The attributes of its object the body changes: stores (``self.stash = t``), in-place writes
    (``self.buf.add_(1)``), container mutation (``self.acc.append(t)``); ``"*"`` for one it cannot name
    (``setattr``, a write through a method of its own); through a local that holds the state too (``cache =
    self.cache; cache[k] = t``: ``state_views.py``). Second, those of them it only changes in place
    (``self.buf.add_(1)``, ``self.buf[0] = x``): their tensors were made where the object was built, not by
    the body's stream. One walk of the body for both."""
    if receiver is None:
        return frozenset(), frozenset()
    containers(fn)  # its item stores write no memory
    found: set[str] = set()
    rebound: set[str] = set()
    held = state_locals(fn, receiver)
    for node in _simple_statements(fn):
        written = inplace_writes(node)
        if receiver in written:
            found |= _attributes_written(node, receiver)
            rebound |= _attributes_rebound(node, receiver)
        for name in written & held.keys():  # through a local that holds the state (``v = self.buf[0]``)
            found |= held[name]
            rebound |= held[name] if _mutated(node, name) else set()
    return frozenset(found), frozenset(found - rebound - {"*"})


def _mutated(stmt: ast.stmt, name: str) -> bool:
    """``stmt`` calls a method of ``name`` that is not a tensor's in-place one (``cache.update(...)``)."""
    return any(
        isinstance(n.func, ast.Attribute) and alias_root(n.func.value) == name and not n.func.attr.endswith("_")
        for n in walked_of(stmt, ast.Call)
    )


def reads_state(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, receiver: str | None, submodules: Iterable[str]
) -> frozenset[str]:
    """The attributes of its object the body reads (``self.buf``, ``self.proj(x)`` of a submodule ``proj``);
    ``"*"`` where it may read any: a call of anything else on it (a method, maybe inherited), or the object
    passed on whole (``helper(self)``)."""
    if receiver is None:
        return frozenset()
    nodes = walked(fn)
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    attributes = [
        n for n in nodes if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == receiver
    ]
    known = frozenset(submodules)
    found = {"*" if id(n) in called and n.attr not in known else n.attr for n in attributes}
    chained = {id(n.value) for n in attributes}
    loaded = [n for n in nodes if isinstance(n, ast.Name) and n.id == receiver and isinstance(n.ctx, ast.Load)]
    bare = any(id(n) not in chained for n in loaded)  # the object itself passed on
    return frozenset({"*"} if bare or "*" in found else found)


def _simple_statements(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The statements without a block of their own (a compound one holds its writes in those)."""
    return [node for node in walked_of(fn, ast.stmt) if not hasattr(node, "body")]


def _attributes_rebound(stmt: ast.stmt, receiver: str) -> set[str]:
    """What a statement may point at a new value: a store to ``receiver.attr``, a call of a method that is
    not a tensor's in-place one (``self.acc.append(t)``), an augmented assignment of the attribute itself."""
    found: set[str] = set()
    targets = scan.assignment_targets(stmt)
    for target in targets:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == receiver:
            found.add(target.attr)
    for node in walked_of(stmt, ast.Call):
        if isinstance(node.func, ast.Attribute) and not node.func.attr.endswith("_"):
            found |= {a for a in [first_attribute(node.func.value, receiver)] if a}
    return found


def _attributes_written(stmt: ast.stmt, receiver: str) -> set[str]:
    """The first attribute of each chain rooted at ``receiver`` that ``stmt`` writes (``*`` if none is named)."""
    targets = scan.assignment_targets(stmt)
    for node in walked_of(stmt, ast.Call):
        if isinstance(node.func, ast.Attribute):
            targets.append(node.func.value)
    found = {first for target in targets if (first := first_attribute(target, receiver))}
    return found or {"*"}


def state_reads(stmt: ast.AST, methods: frozenset[str]) -> set[str]:
    """What of objects' state ``stmt`` may read: ``root.attr`` for each attribute chain (``self.buf``), and
    ``root.*`` for a call of one of ``methods`` (``self.helper(x)`` may read any attribute of ``self``)."""
    found: set[str] = set()
    for node in walked(stmt):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.add(f"{node.value.id}.{node.attr}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in methods
            and isinstance(node.func.value, ast.Name)
        ):
            found.add(f"{node.func.value.id}.*")
    return found
