"""How two planned calls of one caller relate: whether a result passes on the same stream, a relay or a join.

Two calls relate by their streams and their guards' keys (``guard_keys.guard_key``): the later forks wherever the
earlier did when its guard has no key, the same key, or the key of the ``if`` the earlier always forks under.
The analysis (``transfer.Relations``) asks; the planner makes one per round, with the writes of the calls it
left on the caller's stream in earlier rounds.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.lower.flow.item_slots import NO_SLOTS, Slots
from codegen.lower.flow.loop_parity import Parity
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state_writes import state_writes

__all__ = ["CallRelations"]


@attrs.define(eq=False)
class CallRelations:
    """The planner's answers to ``transfer.Relations`` for one round's sites."""

    sites: list[Site]
    keys: list[str | None]  # each site's guard as a comparable key (None: it always forks)
    reached: dict[int, str] = attrs.Factory(dict)  # a site that always forks when reached: the ``if`` test around it
    dropped: dict[ast.stmt, frozenset[str]] = attrs.Factory(dict)  # a call left on the caller's stream -> what
    # it writes in place of the caller's (``Site.writes``: no longer a site, read by ``transfer``)
    made_only_by: dict[str, frozenset[int]] = attrs.Factory(dict)  # a local only calls bind -> those calls
    # (``call_bound.py``: read by ``fork.same_stream``)
    state_writer: Callable[[ast.stmt], frozenset[str]] = state_writes  # ``state_writes.StateWrites`` of the caller
    slots: Slots = NO_SLOTS  # calls whose join event is their iteration's parity's (``item_slots.py``)
    parity: Parity | None = None  # a staging a loop issues one iteration ahead (``loop_parity.py``)
    fresh: dict[ast.stmt, frozenset[str]] = attrs.Factory(dict)  # names bound to new memory (``fresh_bindings.py``)
    _state: dict[int, frozenset[str]] = attrs.field(factory=dict, init=False)  # ``state_of``, asked so far

    def state_written(self, stmt: ast.stmt, apart: frozenset[str] = frozenset()) -> frozenset[str]:
        without = getattr(self.state_writer, "without_items", None) if apart else None
        return without(stmt, apart) if without is not None else self.state_writer(stmt)

    def consume(self, producer: int, consumer: int) -> str:
        if not self._forks_with(producer, consumer):
            return "join"
        return "none" if self.sites[producer].tag == self.sites[consumer].tag else "relay"

    def state_of(self, site: int) -> frozenset[str]:
        """What of objects' state the call reads (``Site.state_read``; a staging's calls stand for each other:
        ``loop_parity.py``), each site's read once per round (the analysis asks of every pending call at every
        statement)."""
        stands = self.parity.stands_for(site) if self.parity is not None else (site,)
        return frozenset().union(*(self._state_read(s) for s in stands))

    def _state_read(self, site: int) -> frozenset[str]:
        if site not in self._state:
            held = getattr(self.state_writer, "held_by", None)  # a local holding state, given whole
            call = self.sites[site].call.call
            bare = frozenset(a.id for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name))
            given = held(bare) if held is not None else frozenset()
            self._state[site] = self.sites[site].state_read(frozenset()) | given
        return self._state[site]

    def covers(self, earlier: int, later: int) -> bool:
        return self._forks_with(earlier, later) and self.sites[earlier].tag == self.sites[later].tag

    def _forks_with(self, first: int, then: int) -> bool:
        """``then`` forks wherever ``first`` forked."""
        key = self.keys[then]
        return key is None or key == self.keys[first] or key == self.reached.get(first)
