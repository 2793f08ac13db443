"""Argument rules shared by the decorators (at decoration time) and the transformer.

Each check returns ``None`` when the value is fine, or a :class:`Violation` naming
the diagnostic code, so the runtime error and the positioned diagnostic say the
same thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeGuard

import attrs

from npudsl import codes

__all__ = [
    "is_shared_event",
    "SYNC_MODES",
    "Violation",
    "check_cores",
    "check_count",
    "check_event",
    "check_events",
    "check_priority",
    "check_sync",
    "check_tag",
    "check_when",
    "check_clone",
]

SYNC_MODES = ("auto", "manual")

_TAG = re.compile(r"[A-Za-z0-9_.:\-]+\Z")
_EVENT = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*:)?[A-Za-z_][A-Za-z0-9_]*\Z")  # "name", or shared "namespace:name"
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


@attrs.frozen(kw_only=True)
class Violation:
    code: str
    message: str
    hint: str
    item: int | None = None  # which value of a ``*args`` argument (``@after("a", "b c")``: 1)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def check_tag(value: object) -> Violation | None:
    if isinstance(value, str) and _TAG.match(value):
        return None
    return Violation(
        code=codes.BAD_TAG,
        message=f"stream tag {value!r} is not a non-empty string of letters, digits, '_', '.', ':' or '-'",
        hint='name the stream with a string literal, e.g. @on_stream("shared")',
    )


def check_priority(value: object) -> Violation | None:
    if _is_int(value) and value >= 0:
        return None
    return Violation(
        code=codes.BAD_NUMBER,
        message=f"stream priority {value!r} is not a non-negative integer",
        hint="torchair reserves the priority; use 0",
    )


def check_event(value: object) -> Violation | None:
    if isinstance(value, str) and _EVENT.match(value):
        return None
    return Violation(
        code=codes.BAD_EVENT,
        message=f"event name {value!r} is not an identifier (or a shared 'namespace:identifier')",
        hint='name events with identifier strings, e.g. @after("dispatched"), or @after("moe:dispatched") for an '
        "event shared with other classes and files",
    )


def check_events(decorator: str) -> Callable[[object], Violation | None]:
    """``*events``: at least one, each an event name."""

    def check(value: object) -> Violation | None:
        names = value if isinstance(value, tuple) else ()
        if not names:
            return Violation(
                code=codes.BAD_ARGUMENTS,
                message=f"@{decorator} needs at least one event name",
                hint=f'name the events, e.g. @{decorator}("dispatched")',
            )
        for item, name in enumerate(names):
            found = check_event(name)
            if found is not None:
                return attrs.evolve(found, item=item)
        return None

    return check


def check_when(value: object) -> Violation | None:
    if value is None or (isinstance(value, str) and _DOTTED.match(value)):
        return None
    return Violation(
        code=codes.BAD_WHEN,
        message=f"when={value!r} is not a dotted name",
        hint='pass a dotted name as a string, e.g. when="self.multistream"; nothing is evaluated',
    )


def check_cores(kind: str, value: object, *, dotted: bool = True) -> Violation | None:
    """A core count: a positive integer, or (``dotted``) a dotted name as a string, read at call time."""
    if (_is_int(value) and value >= 1) or (dotted and isinstance(value, str) and _DOTTED.match(value)):
        return None
    wanted = "a positive integer or a dotted name" if dotted else "a positive integer"
    return Violation(
        code=codes.BAD_NUMBER,
        message=f"core_limit {kind} count {value!r} is not {wanted}",
        hint='core counts range over [1, cores of the device]; a dotted name as a string ("self.cfg.aic") '
        "is read when the function is called",
    )


def check_count(kind: str) -> Callable[[object], Violation | None]:
    """The rule of a ``core_limit`` argument: ``kind`` is "aicore" or "vector"."""
    return lambda value: check_cores(kind, value)


def check_sync(value: object) -> Violation | None:
    if value in SYNC_MODES:
        return None
    return Violation(
        code=codes.BAD_SYNC,
        message=f"sync={value!r} is not one of {', '.join(map(repr, SYNC_MODES))}",
        hint='leave sync out for automatic fork/join, or pass sync="manual"',
    )


def check_clone(value: object) -> Violation | None:
    if isinstance(value, bool):
        return None
    return Violation(
        code=codes.BAD_NUMBER,
        message=f"keep_output clone={value!r} is not a bool",
        hint="pass clone=True or clone=False",
    )


def is_shared_event(name: str) -> bool:
    """``"moe:before_dispatch"``: one event in every class and file that names it (CONTRACT section 1)."""
    return ":" in name
