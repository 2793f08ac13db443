"""The analysis's steps sorted by what the lowering makes of them: a relay is a wait the relayed-to call runs first
thing on its stream, a join a wait of the caller's stream before its anchor.

A call that surely waits first for a call on another stream that forks (a relay placed on every path, not *may*)
needs no fork of its own (``fork.py``): that wait orders it after the caller's earlier work already.
"""

from __future__ import annotations

import attrs

from codegen.lower.flow.analysis import Analysis, Anchor
from codegen.lower.flow.transfer import Join, Relay

__all__ = ["SortedSteps", "sorted_steps"]


@attrs.frozen(kw_only=True)
class SortedSteps:
    relays: dict[int, list[Relay]]  # by the call whose stream waits
    joins: list[tuple[Anchor, Join]]
    sure: dict[int, set[int]]  # call -> the calls on other streams it surely waits for first
    waited: set[int]  # the calls some step waits for


def sorted_steps(result: Analysis) -> SortedSteps:
    """The steps of ``result``, in the order the analysis placed them."""
    relays: dict[int, list[Relay]] = {}
    sure: dict[int, set[int]] = {}
    joins: list[tuple[Anchor, Join]] = []
    waited: set[int] = set()
    for anchor, found in result.steps.items():
        for step in found:
            waited.add(step.site)
            if isinstance(step, Relay):
                relays.setdefault(step.to, []).append(step)
                if not step.may:
                    sure.setdefault(step.to, set()).add(step.site)
            else:
                joins.append((anchor, step))
    return SortedSteps(relays=relays, joins=joins, sure=sure, waited=waited)
