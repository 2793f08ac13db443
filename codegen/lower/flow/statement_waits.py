"""Which pending calls one statement must wait for, by what it reads and writes.

A statement waits for a pending call whose results it reads (but those it reads as one micro-batch's item, or
apart from it: ``item_slots.py``, ``item_apart.py``), whose inputs it writes in place, or whose state it or a
planned call crosses (``crossing_writes.py``); one that reads a single item of a pending call's results waits for
that item's call only. A planned call is asked its own reads (its bare arguments are relays, ``transfer.py``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import attrs

from codegen.lower.flow.crossing_writes import state_crosses, state_written, touches, writes_apart
from codegen.lower.flow.state import Pending, State, pending
from codegen.lower.flow.state_access import state_reads
from codegen.lower.flow.statement_names import data_read
from codegen.lower.flow.sync_steps import Relations, SiteView, Step, join_step
from codegen.lower.flow.writes import inplace_writes

if TYPE_CHECKING:
    from codegen.lower.flow.item_slots import Slots

__all__ = ["Asked", "asks", "item_joins", "touched_joins"]


@attrs.frozen
class Asked:
    """What one statement reads and writes in place, and per pending call (by site) what it reads of that call's
    results as one micro-batch's item (``item_slots.py``) and apart from it (``item_apart.py``)."""

    stmt: ast.stmt
    reads: frozenset[str] | set[str]
    written: frozenset[str]
    slots: Slots | None
    items: dict[int, frozenset[str]]
    apart: dict[int, frozenset[str]]


def asks(stmt: ast.stmt, state: State, site: SiteView | None, relations: Relations, methods: frozenset[str]) -> Asked:
    """The reads and writes of ``stmt``: a planned call's own reads where it is one, else what the statement reads
    of data and of objects' state; a call left on the caller's stream writes what it was found to write."""
    reads = data_read(stmt) | state_reads(stmt, methods) if site is None else set(site.reads)
    written = inplace_writes(stmt) | (frozenset() if site else relations.dropped.get(stmt, frozenset()))
    slots = getattr(relations, "slots", None)
    items = {p.site: slots.items(stmt, p.site) if slots else frozenset() for p in pending(state)}
    apart = {p.site: slots.apart_of(stmt, p.site) if slots else frozenset() for p in pending(state)}
    return Asked(stmt=stmt, reads=reads, written=written, slots=slots, items=items, apart=apart)


def touched_joins(asked: Asked, state: State, site: SiteView | None, relations: Relations) -> list[Step]:
    """A join for each pending call whose results the statement reads (its items apart), whose inputs it writes,
    or whose state it or a planned call crosses."""
    return [join_step(p, state) for p in pending(state) if _touched(asked, p, site, relations)]


def _touched(asked: Asked, p: Pending, site: SiteView | None, relations: Relations) -> bool:
    slots, apart = asked.slots, asked.apart[p.site]
    return bool(
        touches(p.names, asked.reads - asked.items[p.site] - apart)
        or p.inputs & (asked.written - (apart & slots.distinct if slots else frozenset()))
        or writes_apart(p, site, relations)
        or state_crosses(p, site, relations)
        or state_written(p, asked.stmt, site, relations, apart)
    )


def item_joins(asked: Asked, state: State, joining: set[int]) -> list[Step]:
    """A join of one item's call for each pending call not joined already whose result is read as an item."""
    return [
        attrs.evolve(join_step(p, state), slot=asked.slots.reads[asked.stmt][p.site][0])  # type: ignore[union-attr]
        for p in pending(state)
        if p.site not in joining and p.names & asked.items[p.site]
    ]
