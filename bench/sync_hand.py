"""Run a row's hand-written version: race-free, equal to the reference, minimal, and its count per target.

Under the row's premise (:mod:`bench.sync_premise`): the reference and the hand
version are both called from a caller that makes their tensor inputs, or both
compiled alone. See :mod:`bench.sync_proof` for the minimality proof and
:mod:`bench.sync_rules` for the count per target. Where the GE code runs another
schedule than the portable one (GE orders data itself, so a side block may start
where a stream-semantics schedule must not), ``<row>_ge.py`` is the hand version
of that schedule written with torchair's ops: its own count and proof
(:mod:`bench.sync_ge_proof`). Calls of the user's own events (``USER_EVENTS``) are
kept whatever the checker says: ``@after``/``@records`` is the user's schedule,
not a data dependency the hand version may drop.
"""

from __future__ import annotations

import copy
import importlib
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import attrs
import torch
import torch.fx

from bench.sync_count import count_graph, total
from bench.sync_ge_proof import capture_ge, ge_drops
from bench.sync_premise import premise, wrap
from bench.sync_proof import Drop, capture, drops
from bench.sync_rules import hand_counts
from bench.sync_sources import Row

__all__ = ["Proof", "hand_module", "keep_user_events", "prove"]


@attrs.frozen
class Proof:
    counts: dict[str, int]  # per target
    drops: list[Drop]  # the portable hand version's, then a GE hand version's (``ge: ...``) where there is one
    equal: bool
    ge_calls: int | None = None  # the GE hand version's sync calls, where there is one

    @property
    def droppable(self) -> list[Drop]:
        return [drop for drop in self.drops if not drop.needed]


def hand_module(row: Row, target: str = "") -> ModuleType | None:
    """``bench.hand_written.<row>`` (``<row>_<target>`` with a target), or ``None`` when there is none."""
    name = f"bench.hand_written.{row.name}{f'_{target}' if target else ''}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name == name:
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
    """A record or wait of one of ``events``, spelled as written or qualified (``'seed000.Model.add_done'``);
    on GE (:mod:`bench.sync_ge_proof`), an ordering call whose source line names one of them."""
    op = drop.call.split("(")[0]
    if op in ("record", "wait", "wait_tensor"):
        line = drop.call.partition(" at ")[2]
        return any(re.search(rf"\b{re.escape(e)}\b", line) for e in events)
    if op not in ("event_record", "event_wait"):
        return False
    return any(f"{edge}{e}'" in drop.call for e in events for edge in ("'", ".", ":"))


def keep_user_events(found: list[Drop], events: tuple[str, ...]) -> list[Drop]:
    """``found`` with every call of a user event needed: the user's schedule, whatever the checker says."""
    return [
        attrs.evolve(d, needed=True, why="a user event: part of the schedule") if _user_event(d, events) else d
        for d in found
    ]


def _run(
    row: Row, module: ModuleType, capturing: Callable[..., tuple[torch.fx.GraphModule, Any]]
) -> tuple[torch.fx.GraphModule, bool]:
    """``module.Hand`` captured by ``capturing`` under the row's premise, and whether it equals the reference."""
    model, inputs = row.reference()
    hand = wrap(module.Hand(copy.deepcopy(model)), row.caller)
    want_inputs, hand_inputs = inputs(), inputs()
    with row.running(), torch.no_grad(), premise(row.caller):
        want = wrap(model, row.caller)(*want_inputs)
        gm, got = capturing(hand, hand_inputs)
    return gm, _same(got, want) and _same(hand_inputs, want_inputs)


def _with_ge(row: Row, proof: Proof) -> Proof:
    """``proof`` with the row's GE hand version (``<row>_ge.py``: torchair's own ops), where there is one: its
    count replaces the one derived by rule, its proof joins the portable one."""
    module = hand_module(row, "ge")
    if module is None:
        return proof
    gm, equal = _run(row, module, capture_ge)
    found = [attrs.evolve(d, call=f"ge: {d.call}") for d in keep_user_events(ge_drops(gm), tuple(module.USER_EVENTS))]
    counts = {**proof.counts, "ge": total(count_graph(gm))}
    return Proof(counts, [*proof.drops, *found], proof.equal and equal, len(found))


def prove(row: Row) -> Proof | None:
    """The proof for ``row``'s hand version (``None``: there is none)."""
    module = hand_module(row)
    if module is None:
        return None
    gm, equal = _run(row, module, capture)
    events = tuple(module.USER_EVENTS)
    return _with_ge(row, Proof(hand_counts(gm, events), keep_user_events(drops(gm), events), equal))
