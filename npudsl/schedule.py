"""The metadata the decorators attach to a function: ``fn.__npudsl__``.

Tools read it without running anything; the eager runtime follows it when the
decorated code runs untransformed.
"""

from __future__ import annotations

import attrs

__all__ = [
    "CoreLimitSpec",
    "EventSpec",
    "KeepOutputSpec",
    "Schedule",
    "StreamSpec",
]


@attrs.frozen(kw_only=True)
class StreamSpec:
    tag: str
    priority: int = 0
    sync: str = "auto"
    when: str | None = None


@attrs.frozen(kw_only=True)
class EventSpec:
    """One ``@after`` or ``@records``: the events, and the guard."""

    events: tuple[str, ...]
    when: str | None = None


@attrs.frozen(kw_only=True)
class CoreLimitSpec:
    aicore: int | str  # a count, or a dotted name read at call time ("self.cfg.aic")
    vector: int | str
    when: str | None = None


@attrs.frozen(kw_only=True)
class KeepOutputSpec:
    clone: bool = False
    when: str | None = None


@attrs.frozen(kw_only=True)
class Schedule:
    """Everything the decorators of one function say, in a canonical order."""

    stream: StreamSpec | None = None
    waits: tuple[EventSpec, ...] = ()
    records: tuple[EventSpec, ...] = ()
    core_limit: CoreLimitSpec | None = None
    keep_output: KeepOutputSpec | None = None
