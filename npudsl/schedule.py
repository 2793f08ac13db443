"""The one model of the decorators, and their registry: what each decorator says, whoever reads it.

The decorators build it at decoration time (``fn.__npudsl__``, a ``Schedule[None]``:
no source position), and the transformer builds it from the source
(``codegen.frontend.ir.StreamFunction``, a ``Schedule[Loc]`` with a position on each
spec), so the eager runtime, the collector, the checks and the lowering read the
same classes. :data:`DECORATORS` holds each decorator's facts once: the field of
``Schedule`` it fills (a tuple field: it repeats), the rule of each argument
(:mod:`npudsl._rules`), and whether it may be written bare. A spec is made from
its decorator's arguments by name (``spec(**arguments, loc=...)``).
"""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs
from attrs import validators as v

from npudsl import _rules
from npudsl._registry import Decorator

__all__ = [
    "DECORATORS",
    "DECORATOR_FIELDS",
    "REPEATABLE",
    "CoreLimitSpec",
    "EventSpec",
    "Guard",
    "KeepOutputSpec",
    "Loc",
    "Schedule",
    "StreamSpec",
]

L = TypeVar("L")  # where a decorator is written: a ``Loc`` in the transformer, ``None`` at run time
_DOTTED = r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*"


@attrs.frozen(kw_only=True)
class Loc:
    """A 1-based source position."""

    line: int = attrs.field(validator=v.ge(1))
    col: int = attrs.field(validator=v.ge(1))


@attrs.frozen(kw_only=True)
class Guard:
    """``when="a.b"``: the dotted name read at call time."""

    dotted: str = attrs.field(validator=v.matches_re(_DOTTED))

    @property
    def root(self) -> str:
        return self.dotted.split(".", 1)[0]


def _guard(when: str | Guard | None) -> Guard | None:
    """A decorator's ``when`` argument (``None``, or a dotted name) as the model holds it."""
    return Guard(dotted=when) if isinstance(when, str) else when


def _count(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    """A core count is a positive ``int`` or a dotted name (a ``str``) read at call time."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{attribute.name} must be an int or a dotted name, not {value!r}")
    if isinstance(value, int):
        v.ge(1)(_instance, attribute, value)
    else:
        v.matches_re(_DOTTED)(_instance, attribute, value)


@attrs.frozen(kw_only=True)
class StreamSpec(Generic[L]):
    """``@on_stream(tag, priority=0, *, when=None, sync="auto")``."""

    tag: str
    priority: int = attrs.field(default=0, validator=v.ge(0))
    sync: str = attrs.field(default="auto", validator=v.in_(_rules.SYNC_MODES))
    when: Guard | None = attrs.field(default=None, converter=_guard)
    loc: L

    @property
    def is_default(self) -> bool:
        return self.tag == "default"


@attrs.frozen(kw_only=True)
class EventSpec(Generic[L]):
    """One ``@after(*events, when=None)`` or ``@records(*events, when=None)``."""

    names: tuple[str, ...] = attrs.field(alias="events", validator=v.min_len(1))
    when: Guard | None = attrs.field(default=None, converter=_guard)
    loc: L


@attrs.frozen(kw_only=True)
class CoreLimitSpec(Generic[L]):
    """``@core_limit(aicore, vector, *, when=None)``: each count an ``int``, or a dotted name (``"self.cfg.aic"``)
    read when the function is called."""

    aicore: int | str = attrs.field(validator=_count)
    vector: int | str = attrs.field(validator=_count)
    when: Guard | None = attrs.field(default=None, converter=_guard)
    loc: L

    @property
    def known(self) -> bool:
        """Both counts are integers (``npudsl check`` can verify them)."""
        return isinstance(self.aicore, int) and isinstance(self.vector, int)


@attrs.frozen(kw_only=True)
class KeepOutputSpec(Generic[L]):
    """``@keep_output`` or ``@keep_output(clone=False, when=None)``."""

    clone: bool = False
    when: Guard | None = attrs.field(default=None, converter=_guard)
    loc: L


Spec = StreamSpec[L] | EventSpec[L] | CoreLimitSpec[L] | KeepOutputSpec[L]


@attrs.frozen(kw_only=True)
class Schedule(Generic[L]):
    """Everything the decorators of one function say, a field per decorator (a tuple: it repeats)."""

    stream: StreamSpec[L] | None = None
    waits: tuple[EventSpec[L], ...] = ()
    records: tuple[EventSpec[L], ...] = ()
    core_limit: CoreLimitSpec[L] | None = None
    keep_output: KeepOutputSpec[L] | None = None

    def said_by(self, decorator: str) -> tuple[Spec[L], ...]:
        """What ``decorator`` says here: its specs in source order, none when it is not there."""
        value = getattr(self, DECORATORS[decorator].field)
        return value if isinstance(value, tuple) else () if value is None else (value,)

    @property
    def decorations(self) -> tuple[Spec[L], ...]:
        """What each decorator says, in the registry's order."""
        return tuple(spec for decorator in DECORATORS for spec in self.said_by(decorator))

    @property
    def auto_sync(self) -> bool:
        """On a side stream with automatic fork/join (CONTRACT section 2)."""
        return self.stream is not None and self.stream.sync == "auto" and not self.stream.is_default


# The registry: one entry per decorator, in a canonical order. Name resolution, argument shapes and rules (at
# decoration time and statically), the collector, the checks that walk every decorator (``decorations``) and the
# lowering (``LOWERINGS``) read it; the eager runtime reads the fields (tests/dsl/test_decorator_registry.py).
DECORATORS: dict[str, Decorator] = {
    d.name: d
    for d in (
        Decorator(
            name="on_stream",
            field="stream",
            spec=StreamSpec,
            rules={
                "tag": _rules.check_tag,
                "priority": _rules.check_priority,
                "sync": _rules.check_sync,
            },
        ),
        Decorator(name="after", field="waits", spec=EventSpec, rules={"events": _rules.check_events("after")}),
        Decorator(name="records", field="records", spec=EventSpec, rules={"events": _rules.check_events("records")}),
        Decorator(
            name="core_limit",
            field="core_limit",
            spec=CoreLimitSpec,
            rules={"aicore": _rules.check_count("aicore"), "vector": _rules.check_count("vector")},
        ),
        Decorator(
            name="keep_output", field="keep_output", spec=KeepOutputSpec, rules={"clone": _rules.check_clone}, bare=True
        ),
    )
}
DECORATOR_FIELDS = {name: d.field for name, d in DECORATORS.items()}  # decorator -> field of ``Schedule``
REPEATABLE = frozenset(name for name, d in DECORATORS.items() if isinstance(getattr(Schedule(), d.field), tuple))
