"""A planned call as the caller's analysis sees it: what its fork reads, what it writes, the join event it records.

The analysis (``analyze.py``) reads each call through its ``SiteView``. Here the site's own view is widened by
the caller's facts: a name that may share memory with what the call reads or writes (``binding_aliases.py``)
counts as read or written, a guard that may change between two calls (read at each call, or flipped by the body)
makes the fork read it, and a call that records a join event of its own (``own_joins.py``) names it.
"""

from __future__ import annotations

import attrs

from codegen.lower.flow.binding_aliases import widened
from codegen.lower.flow.caller_context import CallerContext
from codegen.lower.flow.sites import Site
from codegen.lower.flow.transfer import SiteView

__all__ = ["site_view"]


def site_view(site: Site, key: str | None, context: CallerContext, groups: dict[str, frozenset[str]]) -> SiteView:
    """The site as the analysis sees it: its fork reads a value that may change between two of its calls only
    when its guard is not stable (a flag read at each call), or its body flips the guard; what it reads, with
    the names that may share that memory (``binding_aliases.py``); the join event it records (its callee's, or
    its own: ``own_joins.py``)."""
    flips = bool(getattr(site.callee, "flips_guard", False))
    changing = (key is not None and key.startswith("<call")) or flips
    view = site.view(context.methods, guard_changes=changing)
    number = context.own_joins.get(site.index)
    event = f"{view.event}#{number}" if number else view.event
    written = widened(view.writes, groups)  # a write through a view is a write of what shares its memory
    objects = frozenset(read.partition(".")[0] for read in view.state)  # the caller's names stored into state it reads
    inputs = widened(view.inputs, groups) | (widened(objects, groups) - objects)
    return attrs.evolve(view, inputs=inputs, names=view.names | written, event=event)
