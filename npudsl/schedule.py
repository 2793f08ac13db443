"""The metadata the decorators attach to a function: ``fn.__npudsl__``.

Tools read it without running anything; the eager runtime follows it when the
decorated code runs untransformed.
"""

from __future__ import annotations

import attrs

__all__ = [
    "DECORATOR_FIELDS",
    "REPEATABLE",
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


# The registry of decorators: each one and the field of ``Schedule`` (and of ``codegen.frontend.ir.StreamFunction``)
# that it fills. The transformer's name resolution, its argument shapes, the collector and the checks
# that walk every decorator of a function derive their lists from it (tests/dsl/test_decorator_registry.py).
DECORATOR_FIELDS = {
    "on_stream": "stream",
    "after": "waits",
    "records": "records",
    "core_limit": "core_limit",
    "keep_output": "keep_output",
}
REPEATABLE = frozenset(
    name for name, field in DECORATOR_FIELDS.items() if isinstance(attrs.fields_dict(Schedule)[field].default, tuple)
)  # stack, each adds events
