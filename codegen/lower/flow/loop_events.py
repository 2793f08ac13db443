"""The events a loop's calls record by iteration, settled against the analysis they change.

Two rules give a call in a loop more than one join event: a micro-batch call records its item's parity slot
(``item_slots.py``, narrowed by ``item_apart.py``), and a staging issued one iteration ahead records its
iteration's parity (``loop_parity.py``). Both change what the analysis may leave pending, so each is tried, and
the analysis run again without it where the events it asks for cannot be spelled (a wait no slot expresses) or
buy nothing (one event serves). This is that loop, kept out of the planner's round.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.analyze import Analysis, analyze
from codegen.lower.flow.caller_context import CallerContext
from codegen.lower.flow.item_apart import apart_items
from codegen.lower.flow.item_slots import NO_SLOTS
from codegen.lower.flow.last_iteration import LastIterations
from codegen.lower.flow.parity_loops import Asked, loop_parity
from codegen.lower.flow.relations import CallRelations
from codegen.lower.flow.sites import Site
from codegen.lower.flow.slot_loops import item_slots
from codegen.lower.flow.transfer import SiteView
from codegen.lower.plan import Anchor

__all__ = ["analyzed", "trimmed"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def analyzed(
    fn: _Function,
    sites: list[Site],
    views: dict[ast.stmt, SiteView],
    relations: CallRelations,
    context: CallerContext,
    following: dict[ast.stmt, Anchor],
    last: LastIterations,
) -> Analysis:
    """The analysis of ``fn`` with the loop events ``relations`` can keep, which it is left holding."""
    slots = item_slots(fn, sites, views) if context.slot_events else NO_SLOTS
    relations.slots = apart_items(slots, sites, context.distinct) if slots.sites else slots
    relations.parity = loop_parity(fn, sites, views, _asked(context, relations), last)
    run = lambda: analyze(fn, views, relations, context.barriers, context.methods, following, last)  # noqa: E731
    result = run()
    while bad := relations.slots.settled(result.states).invalid(result.steps):
        relations.slots = relations.slots.without(bad)  # a wait no slot expresses (``item_slots.py``)
        result = run()
    if relations.parity is not None and not relations.parity.kept(result.steps):
        relations.parity = None  # one event serves (``loop_parity.py``)
        result = run()
    relations.slots = relations.slots.settled(result.states)
    return trimmed(relations, result)


def trimmed(relations: CallRelations, result: Analysis) -> Analysis:
    """``result`` without the keeps of a staging's new results its parity events make unneeded."""
    if relations.parity is not None:
        relations.parity.trim(result.steps)
    return result


def _asked(context: CallerContext, relations: CallRelations) -> Asked:
    return Asked(
        events=context.slot_events is not None,
        receiver=context.receiver,
        sized=context.sized,
        relations=relations,
        join_of=lambda site: context.events(site).join,
    )
