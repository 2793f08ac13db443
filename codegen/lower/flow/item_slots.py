"""One micro-batch's wait for its own call: a read of ``xs[j]`` in a later loop waits for the call that stored it.

vllm-ascend's dual-batch overlap dispatches each micro-batch's tokens on the communication stream in one loop
(``for i in range(num_micro_batchs): dispatched_input[i], ... = self._forward_dispatch_comm(...)``) and runs each
one's experts in the next (``for i in range(num_micro_batchs): ... grouped_mlp(dispatched_input[i], ...)``). With
one join event waited for before the second loop, micro-batch 0's experts wait for micro-batch 1's dispatch too.
Here a read of such an item waits in the reading loop, for that item's call only (which calls and reads
qualify: ``slot_loops.py``), in one of two ways:

- *alone*: where the dataflow joins each call before the next (a wait before it, on every path: the dispatch
  loop waits for micro-batch 0's dispatch before micro-batch 1 writes its dispatcher's state), only the loop's
  last call can still run after it: the read of item ``j`` waits for the callee's one event under
  ``j == n - 1``;
- *slots*: otherwise two calls may be pending at once; each call records ``(J, J_2)[i % 2]`` (its callee's join
  event and a second one) and the read of item ``j`` waits for ``(J, J_2)[j % 2]`` (with more than two
  micro-batches a wait may also wait for a later one of its parity). The call stores its result only as
  ``xs[i]``, ``i`` the loop's variable over ``range(n)`` (non-negative: item ``k`` is stored only by iteration
  ``k``, which records slot ``k % 2``); a later record in that slot is a later call on the same stream (the
  callee's only call in the function, its guard read the same at every call), so the slot's last record covers
  item ``k``'s call; and every slot waited for was recorded (the reading loop runs over the same ``range(n)``
  after the whole calling loop). A join that is not an item's waits for the call's last record: ``(i - 1) % 2``
  in its loop before the call (a may-wait: the first iteration has none), ``i % 2`` after it, ``(n - 1) % 2``
  after the loop. A result relayed to another stream is not slotted (``invalid``).

A loop that reads every micro-batch's item (a *sweep*) joins the call for good: nothing waits for it later.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.index.walked import walked
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state import State, joined
from codegen.lower.flow.transfer import Join, Relay
from codegen.lower.plan import EventRef

__all__ = ["NO_SLOTS", "SlotLoop", "Slots", "picked", "slots_of"]


@attrs.frozen(kw_only=True)
class SlotLoop:
    """The loop of a slotted call: ``for var in range(count)``, the call's statement directly in its body."""

    loop: ast.For
    stmt: ast.stmt  # the call's statement
    var: str
    count: str
    items: frozenset[str]  # the containers whose items hold its result


@attrs.frozen
class Slots:
    """The slotted calls of one round (by site index), and the statements reading their results as items."""

    sites: dict[int, SlotLoop] = attrs.Factory(dict)
    reads: dict[ast.stmt, dict[int, tuple[str, frozenset[str]]]] = attrs.Factory(dict)  # -> (index, containers)
    sweeps: dict[ast.stmt, frozenset[int]] = attrs.Factory(dict)  # a loop waiting for every item's call of these
    alone: frozenset[int] = frozenset()  # calls joined before each next one: one event, the last item waits
    apart: dict[ast.stmt, dict[int, frozenset[str]]] = attrs.Factory(dict)  # items apart from earlier calls
    distinct: frozenset[str] = frozenset()  # lists of distinct objects (``distinct_items.py``)

    def swept(self, loop: ast.stmt, state: State) -> State:
        """After ``loop``, which waited for every item's call of the calls it sweeps (the last one's too, which
        orders whatever that call's join covers): those are joined."""
        return joined(state, self.sweeps.get(loop, frozenset()))

    def items(self, stmt: ast.stmt, site: int) -> frozenset[str]:
        """The containers of ``site``'s result that ``stmt`` reads only as the item of its slot index."""
        return self.reads.get(stmt, {}).get(site, ("", frozenset()))[1]

    def apart_of(self, stmt: ast.stmt, site: int) -> frozenset[str]:
        """The containers ``stmt`` reads only as this iteration's item, apart from ``site``'s earlier calls
        (``item_apart.py``)."""
        return self.apart.get(stmt, {}).get(site, frozenset())

    def item_names(self, loop: ast.For | ast.AsyncFor) -> set[str]:
        """The containers the loop's first statement reads only as a slotted call's item (waited for there)."""
        return set().union(*(read for _, read in self.reads.get(loop.body[0], {}).values()))

    def waits(self, site: int, anchor: tuple[str, ast.AST, str], item: str) -> tuple[str, str]:
        """How a join of ``site`` at ``anchor`` waits: the slot it picks (none: the callee's one event) and a test
        it adds; ``item``: the index of the micro-batch it reads (none: the call's last record)."""
        slot = self.sites[site]
        if site in self.alone:  # only the loop's last call may still run
            return "", f"{item} == {slot.count} - 1" if item else ""
        return (f"{item} % 2" if item else self._last(slot, anchor)), ""

    def records(self, site: int) -> str:
        """The slot ``site``'s call records (none: the callee's one event)."""
        return "" if site in self.alone or site not in self.sites else f"{self.sites[site].var} % 2"

    @staticmethod
    def _last(slot: SlotLoop, anchor: tuple[str, ast.AST, str]) -> str:
        """The slot of the call's last record at ``anchor``: this iteration's, the one before, or the loop's last."""
        where = _where(slot, anchor)
        return {"before": f"({slot.var} - 1) % 2", "after": f"{slot.var} % 2"}.get(where, f"({slot.count} - 1) % 2")

    def settled(self, states: dict[ast.stmt, State]) -> Slots:
        """``alone``: the calls joined before each next one (before their statement, on every path)."""
        alone = {i for i, s in self.sites.items() if s.stmt in states and not _pending(states[s.stmt], i)}
        return attrs.evolve(self, alone=frozenset(alone))

    def invalid(self, steps: dict[tuple[str, ast.AST, str], list[Join | Relay]]) -> set[int]:
        """Slotted calls whose waits no slot expresses: relayed to another stream, or surely waited for in their
        loop before the call (the first iteration has no call before it); none where one call runs at a time."""
        bad: set[int] = set()
        for anchor, found in steps.items():
            for step in found:
                if isinstance(step, Relay):
                    bad |= {step.site, step.to} & set(self.sites)
                elif step.site in self.sites and not (step.slot or step.may):
                    bad |= {step.site} if _where(self.sites[step.site], anchor) == "before" else set()
        return bad - self.alone

    def without(self, sites: set[int]) -> Slots:
        kept = {i: s for i, s in self.sites.items() if i not in sites}
        reads = {stmt: {i: r for i, r in found.items() if i in kept} for stmt, found in self.reads.items()}
        sweeps = {loop: done - sites for loop, done in self.sweeps.items()}
        apart = {stmt: {i: c for i, c in found.items() if i in kept} for stmt, found in self.apart.items()}
        reads = {stmt: found for stmt, found in reads.items() if found}
        return Slots(kept, reads, sweeps, self.alone - sites, {s: f for s, f in apart.items() if f}, self.distinct)


NO_SLOTS = Slots()


def slots_of(relations: object) -> Slots:
    """The caller's micro-batch slots (none where the planner found no such loop)."""
    return getattr(relations, "slots", NO_SLOTS)


def picked(event: EventRef, index: str, second_of: Callable[[Site], EventRef] | None, site: Site) -> EventRef:
    """A micro-batch's join: the callee's event or its second, by ``index`` (an expression of the loop's
    counter); ``event`` itself where no slot is picked."""
    if not index or second_of is None:
        return event
    return attrs.evolve(event, pick=(event, second_of(site)), index=index)


def _where(slot: SlotLoop, anchor: tuple[str, ast.AST, str]) -> str:
    """Where ``anchor`` stands: in the call's loop "before" or "after" its statement, or "past" the loop."""
    node = anchor[1]
    if node is slot.loop or node not in walked(slot.loop):
        return "past"
    return "before" if getattr(node, "lineno", 0) < slot.stmt.lineno else "after"


def _pending(state: State, site: int) -> bool:
    return any(p.site == site and p.pending for p in state)
