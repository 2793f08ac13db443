"""When a manual call's inputs need no ``record_stream``: the caller waits for the call's stream before it allocates.

``record_stream(x, S)`` keeps the memory of ``x``, made on the caller's stream, from going to that stream's next
allocation while stream S may still read it. It orders nothing when the caller's stream waits, on an event that S
records after the call, before it can allocate again: from the call on, each statement of its block runs no op on
the caller's stream (flags, unpacking, and calls of stream functions with plain arguments, which run on their own
stream) up to a call, with plain arguments, of a method of the caller's class that first waits, unguarded, for an
event a call on S has recorded since (``self.add_shared(routed, shared)`` whose ``@after("shared_done")`` matches
the ``@records("shared_done")`` of the last call on S). Methods of other classes and modules count as allocating.
The same holds for a tensor made by an earlier call on another side stream M, when no call on M is issued
between the call and that wait: M's next allocation comes after the wait.
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.ir import StreamFunction
from codegen.lower.flow.exprs import runs_op
from codegen.lower.flow.planner import computed
from codegen.lower.flow.sites import Site

__all__ = ["EventFacts", "waited_before_allocating"]


@attrs.frozen(kw_only=True)
class EventFacts:
    """The user events of one module's functions, by qualname."""

    records: dict[str, frozenset[str]]  # recorded at the end whenever the function runs on its stream
    waits: dict[str, frozenset[str]]  # waited for first, always

    @classmethod
    def of(cls, functions: tuple[StreamFunction, ...]) -> EventFacts:
        return cls(
            records={fn.qualname: _recorded(fn) for fn in functions},
            waits={fn.qualname: frozenset(n for s in fn.waits if s.when is None for n in s.names) for fn in functions},
        )


def _recorded(fn: StreamFunction) -> frozenset[str]:
    stream_when = fn.stream.when if fn.stream is not None else None
    return frozenset(n for s in fn.records if s.when is None or s.when == stream_when for n in s.names)


def waited_before_allocating(
    site: Site, block: list[ast.stmt], sites: dict[ast.stmt, list[Site]], facts: EventFacts, owner: str | None
) -> frozenset[str] | None:
    """When the caller's stream waits for ``site``'s stream, after the call, before any statement that may
    allocate: the streams of the calls issued until then (a tensor made on any other stream is safe too: its
    stream allocates again only after that wait). None when it does not."""
    recorded: set[str] = set()
    streams: set[str] = set()
    for stmt in block[block.index(site.stmt) :]:
        here = sites.get(stmt, [])
        if here:
            if any(computed(a.node) for s in here for a in s.args):
                return None  # an argument is computed on the caller's stream first
            recorded |= {e for s in here if s.tag == site.tag for e in facts.records.get(_qualname(s), ())}
            streams |= {s.tag for s in here}
        elif _waits_first(stmt, facts, owner) & recorded:
            return frozenset(streams)
        elif runs_op(stmt):
            return None
    return None


def _qualname(site: Site) -> str:
    return site.callee.qualname  # type: ignore[attr-defined]


def _waits_first(stmt: ast.stmt, facts: EventFacts, owner: str | None) -> frozenset[str]:
    """The events the method ``stmt`` calls waits for before anything else (``self.m(a, b)``, bound or returned,
    with plain arguments); none for any other statement."""
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.Return)) else None
    if owner is None or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return frozenset()
    if not isinstance(call.func.value, ast.Name) or any(
        computed(a) for a in (*call.args, *(k.value for k in call.keywords))
    ):
        return frozenset()
    return facts.waits.get(f"{owner}.{call.func.attr}", frozenset())
