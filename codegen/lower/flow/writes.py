"""Which names a statement writes in place, read from the source (``transform`` never imports torch).

A tensor's memory is written, not rebound, by: an augmented assignment to it (``h += 1``), a store into an item or
attribute of it (``h[0] = 0``, ``cache.k[...] = v``), a call of one of its methods whose ATen schema writes
``self`` (``Tensor(a!) self``, read from ``schema.py``: ``h.add_(1)``, ``h[0].index_copy_(...)``,
``h.record_stream(s)``; a custom op the table does not hold, when spelled with a trailing underscore), a call that
takes it as ``out=``, and a call that takes ``inplace=True`` with it first (``F.relu(h, inplace=True)``). The name
written is the root of the chain, through views (``kv[0].copy_`` and ``kv.transpose(0, 1).copy_`` write ``kv``:
``view_roots.py``). Names bound to views of another (``k, v = kv``) write it too: ``param_writes.py`` follows them.
The spellings are read once for the caller's tensors and its objects' state (``written_exprs.py``); what a body
reads and changes of its own object is ``state_access.py``'s.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.index.walked import per_node, walked, walked_of
from codegen.lower.flow.item_stores import item_stored
from codegen.lower.flow.view_roots import alias_root
from codegen.lower.flow.written_exprs import node_written

__all__ = ["inplace_writes"]


# Python's own containers change in place through these methods (``acc.append(t)``, ``cache.update(...)``).
_MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "remove", "discard", "reverse"}
)  # not ``add``/``sort``: tensors have out-of-place methods of those names
_WRITERS = (ast.AugAssign, ast.Assign, ast.AnnAssign, ast.Call)  # the only nodes that write (``_node_writes``)


def inplace_writes(stmt: ast.AST, *, nested: bool = False) -> frozenset[str]:
    """The names whose memory ``stmt`` may write in place (lambdas excluded, and nested functions and classes
    unless ``nested``); walked once per statement (the analysis asks again on each pass over a loop). A store
    into an item of a Python container the function owns (``xs[i] = t``, ``item_stores.py``) writes no memory."""
    plain, stored = _nested_writes(stmt) if nested else _own_writes(stmt)
    if not stored:
        return plain
    return plain | {name for name, store in stored if name not in item_stored(store)}


_Writes = tuple[frozenset[str], tuple[tuple[str, ast.AST], ...]]  # names written otherwise; (name, assignment)


@per_node
def _own_writes(stmt: ast.AST) -> _Writes:
    return _inplace_writes(stmt, nested=False)


@per_node
def _nested_writes(stmt: ast.AST) -> _Writes:
    return _inplace_writes(stmt, nested=True)


def _inplace_writes(stmt: ast.AST, *, nested: bool) -> _Writes:
    """Each name written: by a store into an assignment's target (with that assignment), or otherwise. Only the
    nodes that can write are read (from the statement's kept walk), those under a skipped scope left out."""
    skipped = (ast.Lambda,) if nested else (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    hidden = {id(n) for scope in walked_of(stmt, skipped) if scope is not stmt for n in walked(scope)}
    plain: set[str] = set()
    stored: set[tuple[str, ast.AST]] = set()
    for node in walked_of(stmt, _WRITERS):
        if id(node) in hidden:
            continue
        names = [name for name in _node_writes(node) if name]
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            stored.update((name, node) for name in names)
        else:
            plain.update(names)
    return frozenset(plain), tuple(pair for pair in stored if pair[0] not in plain)


def _node_writes(node: ast.AST) -> Iterable[str | None]:
    """The roots of what ``node`` itself writes in place (``written_exprs.py``), of an object an attribute is stored
    on (``cache.k = v``), and of a Python container a mutator changes (``acc.append(t)``)."""
    found = [alias_root(e) for e in node_written(node)]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        found += [alias_root(t) for t in targets if isinstance(t, ast.Attribute)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
        found.append(alias_root(node.func.value))
    return found
