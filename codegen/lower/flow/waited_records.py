"""Which side streams already waited for a fork record, on every path to a call: a second wait for it is no call.

A call that reuses an earlier call's fork record (:func:`~codegen.lower.flow.reuse.earlier_fork`) makes its stream
wait for that record. A later call on the same stream that reuses the same record needs no wait of its own where
the first wait runs on every path to it: a stream runs its work in the order issued, so everything after that
wait, the later call included, is already ordered after the record. The first wait runs on every path to the call
when the call that made it stands earlier in the call's block, or in a block around it through ``if`` statements
only (no loop, ``with`` or ``try`` between: the same climb as ``reuse.py``), and it waited under the call's own
condition or under none. Records are told apart by the statement that made them: a later record of the same
event (the callee called again) is another record, whose waits are counted apart.
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.plan import Cond

__all__ = ["WaitedRecords"]


@attrs.frozen(kw_only=True)
class _Waited:
    tag: str  # the stream that waited
    stmt: ast.stmt  # the call whose block starts with the wait
    when: Cond | None  # the condition the wait ran under


@attrs.define(eq=False)
class WaitedRecords:
    """The waits for each fork record (by the statement that recorded it) that the plan issued so far."""

    facts: CallerFacts
    waits: dict[ast.stmt, list[_Waited]] = attrs.Factory(dict)

    def waited(self, record: ast.stmt, tag: str, stmt: ast.stmt, when: Cond | None) -> bool:
        """Stream ``tag`` waited for ``record`` on every path to ``stmt``'s call, under ``when`` or no condition."""
        return any(
            w.tag == tag and w.when in (None, when) and self._before(w.stmt, stmt) for w in self.waits.get(record, ())
        )

    def add(self, record: ast.stmt, tag: str, stmt: ast.stmt, when: Cond | None) -> None:
        """Stream ``tag`` waits for ``record`` first thing in ``stmt``'s block, under ``when``."""
        self.waits.setdefault(record, []).append(_Waited(tag=tag, stmt=stmt, when=when))

    def _before(self, first: ast.stmt, stmt: ast.stmt) -> bool:
        """``first`` runs on every path to ``stmt``: earlier in its block, or in a block around it (``if`` only)."""
        while True:
            block = self.facts.block(stmt)
            if first in block[: block.index(stmt)]:
                return True
            owner = self.facts.owner(stmt)
            if not isinstance(owner, ast.If):
                return False
            stmt = owner
