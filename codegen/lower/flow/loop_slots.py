"""Which of its join events a loop's call records, and each wait for it picks.

Two rules give a call in a loop more than one join event: a micro-batch call joined per item
(``item_slots.py``: ``(J, J_2)[i % 2]`` recorded, the reading loop's item picked) and a staging issued one
iteration ahead (``loop_parity.py``: its iteration's parity recorded, the previous or the current one waited
for). A call is under one rule at most; the lowering asks this one object and not each rule in turn.
"""

from __future__ import annotations

from collections.abc import Collection

import attrs

from codegen.lower.flow.item_slots import Slots, slots_of
from codegen.lower.flow.loop_parity import Parity
from codegen.lower.plan import Anchor

__all__ = ["LoopSlots", "loop_slots"]


@attrs.frozen(kw_only=True)
class LoopSlots:
    slots: Slots
    parity: Parity | None

    def records(self, site: int) -> str:
        """The slot ``site``'s call records ("": its one event)."""
        return self.slots.records(site) or (self.parity.records(site) if self.parity is not None else "")

    def waits(self, site: int, anchor: Anchor, item: str) -> tuple[str, str]:
        """The slot a wait for ``site`` at ``anchor`` picks and the test it adds (``item``: the micro-batch the
        analysis joined there, ``Join.slot``)."""
        if site in self.slots.sites:
            return self.slots.waits(site, anchor, item)
        return self.parity_slot(site, anchor), ""

    def parity_slot(self, site: int, anchor: Anchor) -> str:
        """The slot a staging's wait at ``anchor`` picks ("": none)."""
        return self.parity.waits(site, anchor) if self.parity is not None else ""

    def read(self, waited: Collection[int]) -> set[int]:
        """The calls whose records a staging's waits read besides those ``waited`` for (``Parity.recorders``)."""
        return self.parity.recorders(waited) if self.parity is not None else set()


def loop_slots(relations: object) -> LoopSlots:
    """The slots of the caller whose calls ``relations`` relate."""
    return LoopSlots(slots=slots_of(relations), parity=getattr(relations, "parity", None))
