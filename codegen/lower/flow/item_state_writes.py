"""What a statement of the caller changes of an object held in an item of its object's state: ``self.ds[i].prepare(h)``.

``y = self.dispatch(self.ds[i])``, whose body reads ``d.buf``, then ``self.ds[j].prepare(h)`` on the caller's stream:
``prepare`` writes its object's ``buf`` (in place, or by pointing it at a new tensor the old one's memory then
goes to), and ``self.ds[j]`` may be the object the side stream still reads. The chains a statement writes
(``state_writes.py``) are attribute chains (``self.buf``, ``self.sub.scale``); an item of a chain has none, so such a
write was no write at all and the side call was never joined: the race checker saw ``self.ds[0].buf`` written on the
caller's stream while the dispatch still read it. The same holds for a local that holds the state (``ds =
self.ds``, ``state_views.py``) and for a tensor written in place through an item (``self.ds[j].buf.copy_(h)``,
``self.ds[j].buf[0] = 1``, ``self.ds[j].buf += 1``), and for an attribute stored on an item (``self.ds[j].buf =
t``): the old tensor is dropped while the side stream may read it.

Nothing here says which item, nor what the item's method changes, so such a statement writes the container's chain
and anything below it (``self.ds``, ``self.ds.*``): a pending call reading any of it is joined before the statement
(``crossing_writes.state_written``: a call given ``self.ds[i]`` reads ``self.ds``). A tensor's own method on an item
(``self.bufs[i].sum()``) is read by its spelling (``written_exprs.py``), as everywhere.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from codegen.index.scan import dotted_name
from codegen.index.walked import walked_of
from codegen.lower.flow import schema
from codegen.lower.flow.view_roots import view_base
from codegen.lower.flow.written_exprs import attribute_chain, node_written

__all__ = ["item_state_writes"]

_WRITERS = (ast.AugAssign, ast.Assign, ast.AnnAssign, ast.Call)


def item_state_writes(
    stmt: ast.stmt,
    receiver: str | None,
    held: Mapping[str, frozenset[str]],
    apart: frozenset[str] = frozenset(),
    decided: Callable[[ast.Call], bool] = lambda call: False,
) -> frozenset[str]:
    """The state chains ``stmt`` may change through an item of ``receiver``'s state (``self.ds[i]``), or of a local
    in ``held`` (the attributes each holds: ``state_views.state_locals``), each with any of its own (``.*``);
    ``apart``: list attributes whose items it names are apart from a pending call's (``item_apart.py``);
    ``decided``: a call on an item whose element class says what it writes (``item_calls.py``: what the call
    writes is ``call_state_writes``' answer, not read here)."""
    if receiver is None:
        return frozenset()
    found: set[str] = set()
    for node in _changed(stmt, decided):
        found |= _item_chains(node, receiver, held) - apart
    return frozenset(c for chain in found for c in (chain, f"{chain}.*"))


def _changed(stmt: ast.stmt, decided: Callable[[ast.Call], bool]) -> list[ast.expr]:
    """What ``stmt`` may change: the objects it calls methods of (a tensor's method only where its schema writes),
    what it calls (``self.layers[i](x)``), what it writes in place, and the objects it stores attributes on; a call
    the element class decides (``decided``) is not among them."""
    found: list[ast.expr] = []
    for call in walked_of(stmt, ast.Call):
        if decided(call):
            continue
        func = call.func
        if isinstance(func, ast.Attribute) and schema.writes_self(func.attr) is None:
            found.append(func.value)
        elif isinstance(func, ast.Subscript):
            found.append(func)
    spelled = [e for node in walked_of(stmt, _WRITERS) for e in node_written(node)]
    stores = [t.value for n in walked_of(stmt, _WRITERS) if not isinstance(n, ast.Call) for t in _targets(n)]
    return found + [e for e in [*spelled, *stores] if attribute_chain(e) is None]  # the others: state_writes.py


def _targets(node: ast.AST) -> list[ast.Attribute]:
    """The attributes an assignment ``node`` stores (``self.ds[j].buf = t``, also inside an unpacking)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
    return [t for target in targets for t in walked_of(target, ast.Attribute) if isinstance(t.ctx, ast.Store)]


def _item_chains(node: ast.expr, receiver: str, held: Mapping[str, frozenset[str]]) -> set[str]:
    """The container chain of the first item down ``node``'s chain of views (``self.ds`` of ``self.ds[i].buf``), or
    the state a held local at its root holds (``ds[i]``, ``d`` of ``d = self.d``)."""
    while (below := view_base(node)) is not None:
        if isinstance(node, ast.Subscript):
            chain = dotted_name(below)
            root = chain.split(".")[0] if chain else None
            if chain and root == receiver and "." in chain:
                return {chain}
            if chain and "." not in chain and chain in held:
                return {f"{receiver}.{a}" if a != "*" else receiver for a in held[chain]}
        node = below
    if isinstance(node, ast.Name) and node.id in held:  # ``d = self.d`` then ``d.prepare(h)``
        return {f"{receiver}.{a}" if a != "*" else receiver for a in held[node.id]}
    return set()
