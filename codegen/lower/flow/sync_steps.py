"""The steps the flow analysis places before a statement, what it knows of a planned call, and how a join is made.

A pending call is joined (:class:`Join`: the caller's stream waits for the call's stream) or relayed (:class:`Relay`:
another planned call's stream waits for it, the caller's does not). The analysis reads each planned call through a
:class:`SiteView` and asks how two calls relate through :class:`Relations` (``relations.py`` answers). A join holds
the names of the calls it covers too, and a join that another join at the same place covers is dropped
(:func:`minimal_joins`). What each statement asks for is ``transfer.py``'s.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Protocol

import attrs

from codegen.lower.flow.state import Pending, State, pending

__all__ = ["Join", "Relations", "Relay", "SiteView", "Step", "join_step", "minimal_joins"]


@attrs.frozen
class Join:
    """The caller's stream waits for ``site`` here; ``may``: only if it forked (a flag set at the call says).
    ``names``: what the caller may read of the joined results afterwards (kept alive for its stream); ``where``:
    facts of fixed tests true wherever it is still pending (the wait re-reads them: ``fixed_tests.py``)."""

    site: int
    may: bool
    names: frozenset[str] = attrs.field(default=frozenset(), eq=False)
    where: frozenset[tuple[str, bool]] = attrs.field(default=frozenset(), eq=False)
    slot: str = ""  # the index ``j`` of the one item ``xs[j]`` whose call it waits for: the call stays pending


@attrs.frozen
class Relay:
    """The stream of ``to`` waits for the stream of ``site`` here (the caller's stream does not)."""

    site: int
    to: int
    may: bool


Step = Join | Relay


class Relations(Protocol):
    """How two planned calls relate, as the planner knows from their streams and guards."""

    def consume(self, producer: int, consumer: int) -> str:
        """``producer``'s result passed to ``consumer``: "none" (same stream), "relay", or "join"."""

    def covers(self, earlier: int, later: int) -> bool:
        """Joining ``later`` also joins ``earlier`` (same stream, and ``later`` forks whenever ``earlier`` did)."""

    def state_of(self, site: int) -> frozenset[str]:
        """What of objects' state ``site``'s call reads on its stream (``self.buf``, ``self.sub.*``)."""

    @property
    def dropped(self) -> Mapping[ast.stmt, frozenset[str]]:
        """A call left on the caller's stream -> the caller's names it writes in place (no longer a site)."""

    def state_written(self, stmt: ast.stmt, apart: frozenset[str] = frozenset()) -> frozenset[str]:
        """What of objects' state ``stmt`` writes in place on the caller's stream (``state_writes.py``), but through
        items of the list attributes ``apart`` (``item_apart.py``)."""


@attrs.frozen(kw_only=True)
class SiteView:
    """What the analysis needs to know of a planned call site."""

    index: int
    names: frozenset[str]  # the names its statement binds to the result
    bare: frozenset[str]  # names passed to it as whole arguments
    reads: frozenset[str]  # what the statement reads on the caller's stream (bare arguments excluded)
    guarded: bool = False  # whether it forks depends on a value that may change between two of its calls
    inputs: frozenset[str] = frozenset()  # the caller's names whose memory the call reads
    event: str = ""  # the callee: calls of one callee record one join event
    state: frozenset[str] = frozenset()  # what of objects' state the call reads (its body's on its stream)
    writes: frozenset[str] = frozenset()  # the caller's names whose memory the call writes in place (sites.py)
    state_writes: frozenset[str] = frozenset()  # what of objects' state its body writes (``self.buf``, ``self.*``)


def join_step(entry: Pending, state: State) -> Join:
    """The join of ``entry``, holding the names of the calls it covers too."""
    covered = entry.covers if entry.forked else frozenset()
    names = entry.names.union(*(p.names for p in pending(state) if p.site in covered))
    return Join(entry.site, not entry.forked, names, entry.where)


def minimal_joins(joins: list[Join], state: State) -> list[Join]:
    """Drop the joins another join here makes redundant (it covers them on every path)."""
    sites = {j.site for j in joins if not j.slot}  # a slot's wait covers one item's call only
    covered = {c for p in state if p.site in sites and p.forked for c in p.covers}
    return [j for j in joins if j.site not in covered]
