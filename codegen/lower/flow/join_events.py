"""Which event a wait for a call reads, and under which condition: the join events of one caller's lowering.

A call records its join on the callee's event, or on an earlier call's where that call's wait joins it too
(``shared_join.py``); a call in a loop may record one of two events, and each wait picks the one of its micro-batch or
iteration (``loop_slots.py``, ``item_slots.py``). A wait runs where the call forked: under the call's condition, or
under its flag where the analysis placed a *may* join (the call forks on some paths only).
"""

from __future__ import annotations

import attrs

from codegen.lower.flow.caller_context import CallerContext
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.item_slots import picked
from codegen.lower.flow.loop_slots import LoopSlots, loop_slots
from codegen.lower.flow.shared_join import shared_joins
from codegen.lower.plan import Anchor, Cond, EventRef, Wait

__all__ = ["JoinEvents", "join_events"]


@attrs.frozen(kw_only=True)
class JoinEvents:
    """The join events of the calls of one caller: ``joined_as``, a call recording an earlier call's join;
    ``slots``, the loop calls with an event per item or iteration."""

    facts: CallerFacts
    context: CallerContext
    joined_as: dict[int, int]
    slots: LoopSlots

    def when(self, site: int, may: bool) -> Cond | None:
        """The condition of a wait for ``site``: its flag where the join is *may*, else the call's condition."""
        sync = self.facts.syncs[site]
        return Cond.of(sync.flag) if may and sync.flag else sync.cond

    def wait(self, site: int, may: bool) -> Wait:
        return Wait(event=self.event(site), when=self.when(site, may))

    def event(self, site: int) -> EventRef:
        """The join event ``site``'s call records (an earlier call's, where that call's wait joins it too)."""
        return self.context.events(self.facts.sites[self.joined_as.get(site, site)]).join

    def picked(self, event: EventRef, site: int, index: str) -> EventRef:
        """``event``, or the one of the micro-batch ``index`` picks (``item_slots.py``)."""
        return picked(event, index, self.context.slot_events, self.facts.sites[site])

    def recorded(self, site: int) -> EventRef:
        """The join event ``site``'s call records: its own, an earlier call's, or its slot's."""
        return self.picked(self.event(site), site, self.slots.records(site))

    def slotted(self, site: int, anchor: Anchor) -> EventRef:
        """The join event a wait for ``site`` at ``anchor`` reads (a staging's: its iteration's parity)."""
        return self.picked(self.event(site), site, self.slots.parity_slot(site, anchor))


def join_events(facts: CallerFacts, context: CallerContext) -> JoinEvents:
    """The join events of the calls ``facts`` plans, named as ``context`` names them."""
    slots = loop_slots(facts.relations)
    return JoinEvents(facts=facts, context=context, joined_as=shared_joins(facts), slots=slots)
