"""Run a row's hand-written version: race-free, equal to the reference, minimal, and its count per target.

Under the row's premise (:mod:`bench.sync_premise`): the reference and the hand
version are both called from a caller that makes their tensor inputs, or both
compiled alone. See :mod:`bench.sync_proof` for the minimality proof and :mod:`bench.sync_rules`
for the count per target. Calls of the user's own events (``USER_EVENTS``) are
kept whatever the checker says: ``@after``/``@records`` is the user's schedule,
not a data dependency the hand version may drop.
"""

from __future__ import annotations

import copy
import importlib
from types import ModuleType

import attrs
import torch

from bench.sync_premise import premise, wrap
from bench.sync_proof import Drop, capture, drops
from bench.sync_rules import hand_counts
from bench.sync_sources import Row

__all__ = ["Proof", "hand_module", "keep_user_events", "prove"]


@attrs.frozen
class Proof:
    counts: dict[str, int]  # per target
    drops: list[Drop]
    equal: bool

    @property
    def droppable(self) -> list[Drop]:
        return [drop for drop in self.drops if not drop.needed]


def hand_module(row: Row) -> ModuleType | None:
    """``bench.hand_written.<row>``, or ``None`` when the row has no hand version yet."""
    try:
        return importlib.import_module(f"bench.hand_written.{row.name}")
    except ModuleNotFoundError as error:
        if error.name == f"bench.hand_written.{row.name}":
            return None
        raise


def _same(got: object, want: object) -> bool:
    from corpus.test_corpus_eager import _assert_same

    try:
        _assert_same(got, want, "hand-written vs reference")
    except AssertionError:
        return False
    return True


def _user_event(drop: Drop, events: tuple[str, ...]) -> bool:
    """A record or wait of one of ``events``, spelled as written or qualified (``'seed000.Model.add_done'``)."""
    if drop.call.split("(")[0] not in ("event_record", "event_wait"):
        return False
    return any(f"{edge}{e}'" in drop.call for e in events for edge in ("'", ".", ":"))


def keep_user_events(found: list[Drop], events: tuple[str, ...]) -> list[Drop]:
    """``found`` with every call of a user event needed: the user's schedule, whatever the checker says."""
    return [
        attrs.evolve(d, needed=True, why="a user event: part of the schedule") if _user_event(d, events) else d
        for d in found
    ]


def prove(row: Row) -> Proof | None:
    """The proof for ``row``'s hand version (``None``: there is none)."""
    module = hand_module(row)
    if module is None:
        return None
    model, inputs = row.reference()
    hand = wrap(module.Hand(copy.deepcopy(model)), row.caller)
    want_inputs, hand_inputs = inputs(), inputs()
    with row.running(), torch.no_grad(), premise(row.caller):
        want = wrap(model, row.caller)(*want_inputs)
        gm, got = capture(hand, hand_inputs)
    equal = _same(got, want) and _same(hand_inputs, want_inputs)
    events = tuple(module.USER_EVENTS)
    return Proof(hand_counts(gm, events), keep_user_events(drops(gm), events), equal)
