"""What a function reads and changes of its own object's state, and what a statement may read of objects' state.

A call of a stream method reads and writes its object through its body (``self.buf`` read, ``self.count.add_(1)``
written, ``self.helper()`` or the object passed on: anything), so the index keeps, per stream function, the
attributes its body changes (``writes_state``) and reads (``reads_state``), and the planner names what a statement
reads of objects (``state_reads``: ``self.buf``, ``self.*`` for a call of one of the object's methods). A change is
any write ``writes.py`` reads, also through a local that holds the state (``state_views.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.index import scan
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.item_stores import containers
from codegen.lower.flow.read_paths import chain_reads
from codegen.lower.flow.state_views import first_attribute, state_locals
from codegen.lower.flow.view_roots import alias_root
from codegen.lower.flow.writes import inplace_writes
from codegen.lower.flow.written_exprs import call_written

__all__ = ["inplace_state", "reads_state", "state_reads", "writes_state"]


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


def inplace_state(fn: ast.FunctionDef | ast.AsyncFunctionDef, receiver: str | None) -> frozenset[str]:
    """The attributes of its object the body changes (``writes_state``) other than by storing the attribute itself:
    ``self.mode = "x"`` or ``self.buf = t`` points it at another value and writes no memory of the old one, which a
    pending call reading it still holds; ``self.buf += 1``, ``self.buf.add_(1)``, ``self.acc.append(t)`` and a store
    through a local change what it holds."""
    found = writes_state(fn, receiver)[0]
    if receiver is None or not found:
        return found
    stored = {t.attr for t in walked_of(fn, ast.Attribute) if not isinstance(t.ctx, ast.Load) and _on(t, receiver)}
    return found - (stored - _changed_in_place(fn, receiver))


def _changed_in_place(fn: ast.FunctionDef | ast.AsyncFunctionDef, receiver: str) -> set[str]:
    """The attributes some statement of the body changes other than by a plain store to them (``self.buf += 1``
    writes the tensor in place)."""
    found: set[str] = set()
    held = state_locals(fn, receiver)
    for node in _simple_statements(fn):
        if receiver in inplace_writes(node):
            stores = {
                t.attr for t in scan.assignment_targets(node) if isinstance(t, ast.Attribute) and _on(t, receiver)
            }
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
                stores.discard(node.target.attr)  # ``self.buf += 1``: the tensor written in place
            found |= _attributes_written(node, receiver) - stores
        found |= {a for name in inplace_writes(node) & held.keys() for a in held[name]}
    return found


def _on(node: ast.expr, receiver: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver


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
        targets += call_written(node)  # ``torch.relu_(self.count)``: its first argument
    found = {first for target in targets if (first := first_attribute(target, receiver))}
    return found or {"*"}


def state_reads(stmt: ast.AST, methods: frozenset[str]) -> set[str]:
    """What of objects' state ``stmt`` may read: each attribute chain (``self.buf``, ``self.a.e.buf``), and
    ``root.*`` for a call of one of ``methods`` (``self.helper(x)`` may read any attribute of ``self``) or an object
    a call is given whole (``peek(self)``)."""
    found = chain_reads(stmt)  # each chain whole (``read_paths.py``)
    for node in walked(stmt):
        if isinstance(node, ast.Call):
            found |= {f"{a.id}.*" for a in _given(node) if isinstance(a, ast.Name)}
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in methods
            and isinstance(node.func.value, ast.Name)
        ):
            found.add(f"{node.func.value.id}.*")
    return found


def _given(call: ast.Call) -> list[ast.expr]:
    """The values a call is given (``*xs`` and ``**kw``: their containers)."""
    values = [*call.args, *(k.value for k in call.keywords)]
    return [v.value if isinstance(v, ast.Starred) else v for v in values]
