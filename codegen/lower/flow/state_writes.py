"""Which of objects' state a statement of the caller writes in place, named as a planned call's state reads are.

``y = self.side(x)``, whose body reads ``self.buf``, then ``self.buf.mul_(2)`` on the caller's stream: the write
may land while the side stream still reads the tensor, so the statement waits for the call first (``transfer.py``).
Likewise ``self.sub.scale.mul_(2)`` after ``self.sub(x)``, whose ``forward`` reads ``self.scale``, and
``self.buf[0] = v`` or ``self.buf += 1``. The state written is the attribute chain under each expression the
statement writes by its spelling (``written_exprs.py``, the reading ``writes.py`` makes of the caller's tensors:
``self.sub.scale[0].add_(1)``, ``F.relu(self.buf, inplace=True)``, ``out=self.buf``), and what its calls write
through the functions they run (``call_state_writes.py``: a helper of the module or of another module writing its
argument, a function the run cannot read, a method of the object or of a submodule writing its own state), also
through a local that holds the state (``v = self.buf[0]``, ``state_views.py``). A rebinding (``self.stash = t``)
writes no memory the pending call reads, spelled here or in a method the statement calls (``self.swap(t)``:
``state_access.inplace_state``); a tensor the caller made and so drops is kept alive instead
(``rebound_state.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import attrs

from codegen.index.walked import walked_of
from codegen.lower.flow.call_state_writes import Scope, call_state_writes
from codegen.lower.flow.handed_writes import handed_writes
from codegen.lower.flow.item_calls import item_call, item_call_decided
from codegen.lower.flow.item_state_writes import item_state_writes
from codegen.lower.flow.returned_state_locals import caller_held_paths
from codegen.lower.flow.writes import inplace_writes
from codegen.lower.flow.written_exprs import attribute_chain, node_written

__all__ = ["StateWrites", "state_writes"]

_WRITERS = (ast.AugAssign, ast.Assign, ast.AnnAssign, ast.Call)  # the only nodes ``node_written`` reads a write of


def state_writes(stmt: ast.stmt) -> frozenset[str]:
    """The attribute chains (``self.buf``, ``self.sub.scale``) whose memory ``stmt`` writes in place by its
    spelling."""
    chains = (attribute_chain(e) for node in walked_of(stmt, _WRITERS) for e in node_written(node))
    return frozenset(c for c in chains if c is not None)


@attrs.define(eq=False)
class StateWrites:
    """What each statement of one caller ``fn`` (its calls read in ``scope``) writes in place of objects' state: its
    spelling's writes, its calls', and those through a local that holds the state (``v = self.buf[0]`` then
    ``v.mul_(2)``, or ``double(v)``: ``helped``, the caller's names each statement's helpers write); read once per
    statement (the analysis asks again on each pass)."""

    scope: Scope
    fn: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    helped: Mapping[ast.stmt, frozenset[str]] = attrs.Factory(dict)
    _known: dict[ast.stmt, frozenset[str]] = attrs.field(factory=dict, init=False)
    _held: dict[str, frozenset[str]] | None = attrs.field(default=None, init=False)

    def __call__(self, stmt: ast.stmt) -> frozenset[str]:
        found = self._known.get(stmt)
        if found is None:
            calls = (c for call in walked_of(stmt, ast.Call) for c in call_state_writes(call, self.scope))
            found = state_writes(stmt) | frozenset(calls) | self._through_locals(stmt) | self._items(stmt)
            found |= handed_writes(stmt, self.scope)  # ``self.sub.buf().add_(1)``
            self._known[stmt] = found
        return found

    def without_items(self, stmt: ast.stmt, apart: frozenset[str]) -> frozenset[str]:
        """What ``stmt`` writes but through the items of the list attributes ``apart`` (``item_apart.py``: this
        micro-batch's object, another than a pending call's)."""
        receiver = self.scope.receiver
        kept = [call for call in walked_of(stmt, ast.Call) if not _on_item(call, receiver, apart)]
        calls = (c for call in kept for c in call_state_writes(call, self.scope))
        rest = state_writes(stmt) | frozenset(calls) | self._through_locals(stmt) | handed_writes(stmt, self.scope)
        self._items(stmt)  # reads the held locals once
        return rest | item_state_writes(stmt, self.scope.receiver, self._held or {}, apart, self._decided)

    def held_by(self, names: frozenset[str]) -> frozenset[str]:
        """The state the caller's locals ``names`` may hold (``o = self.d``: ``self.d``, ``self.d.*``), which a call
        given one reads (``relations.CallRelations.state_of``)."""
        receiver = self.scope.receiver
        if receiver is None or self.fn is None or not names:
            return frozenset()
        if self._held is None:
            self._held = caller_held_paths(self.fn, self.scope)
        attributes = {a for name in names & self._held.keys() for a in self._held[name]}
        return frozenset(c for a in attributes for c in ([f"{receiver}.*"] if a == "*" else _whole(receiver, a)))

    def _items(self, stmt: ast.stmt) -> frozenset[str]:
        """What ``stmt`` changes through an item of the state (``self.ds[i].prepare(h)``: ``item_state_writes.py``)."""
        receiver = self.scope.receiver
        if self._held is None and receiver is not None and self.fn is not None:
            self._held = caller_held_paths(self.fn, self.scope)
        return item_state_writes(stmt, receiver, self._held or {}, decided=self._decided)

    def _decided(self, call: ast.Call) -> bool:
        """A call on an item whose element class says what it writes (``item_calls.py``)."""
        return item_call_decided(call, self.scope.functions, self.scope.owner, self.scope.receiver)

    def _through_locals(self, stmt: ast.stmt) -> frozenset[str]:
        """The state held by the locals ``stmt`` writes in place (``state_views.py``)."""
        receiver = self.scope.receiver
        written = inplace_writes(stmt) | self.helped.get(stmt, frozenset())
        if receiver is None or self.fn is None or not written:
            return frozenset()
        if self._held is None:
            self._held = caller_held_paths(self.fn, self.scope)
        attributes = {a for name in written & self._held.keys() for a in self._held[name]}
        return frozenset(c for a in attributes for c in ([f"{receiver}.*"] if a == "*" else _whole(receiver, a)))


def _whole(receiver: str, attribute: str) -> tuple[str, str]:
    """An attribute, and any of its own (a local may hold ``self.sub``, whose state a call reads as ``self.sub.*``)."""
    return f"{receiver}.{attribute}", f"{receiver}.{attribute}.*"


def _on_item(call: ast.Call, receiver: str | None, apart: frozenset[str]) -> bool:
    """``call`` is a method of an item of a list in ``apart`` (``self.ds[i].prepare(h)``): read by its items."""
    item = item_call(call.func, receiver) if receiver is not None else None
    return item is not None and f"{receiver}.{item[0]}" in apart
