"""The five decorators of the public contract.

Each validates its literal arguments at decoration time, merges what it says
into the function's :class:`~npudsl.schedule.Schedule` (``fn.__npudsl__``), and
wraps the undecorated function once, so stacked decorators in any order give the
same schedule. Untransformed, the wrapper runs the body through the eager
runtime with the same meaning as the generated code.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

import attrs

from npudsl import _rules, codes
from npudsl.errors import DecoratorError
from npudsl.schedule import CoreLimitSpec, EventSpec, KeepOutputSpec, Schedule, StreamSpec

__all__ = ["after", "core_limit", "keep_output", "on_stream", "records"]

F = TypeVar("F", bound=Callable[..., Any])


def _require(violation: _rules.Violation | None) -> None:
    if violation is not None:
        raise DecoratorError(f"{violation.code} {violation.message} (hint: {violation.hint})")


def _target_function(obj: Any, decorator: str) -> Callable[..., Any]:
    if inspect.isclass(obj):
        forward = obj.__dict__.get("forward")
        if forward is None:
            raise DecoratorError(f"{codes.BAD_PLACE} @{decorator} on class {obj.__name__}, which defines no forward")
        return forward
    if getattr(obj, "__name__", None) == "<lambda>":
        raise DecoratorError(f"{codes.BAD_PLACE} @{decorator} cannot decorate a lambda")
    if inspect.iscoroutinefunction(obj) or inspect.isgeneratorfunction(obj):
        raise DecoratorError(f"{codes.BAD_PLACE} @{decorator} cannot decorate a generator or async function")
    if not callable(obj):
        raise DecoratorError(f"{codes.BAD_PLACE} @{decorator} decorates functions, methods and nn.Module classes")
    return obj


def _apply(obj: F, decorator: str, merge: Callable[[Schedule], Schedule]) -> F:
    fn = _target_function(obj, decorator)
    inner = getattr(fn, "__wrapped__", fn) if hasattr(fn, "__npudsl__") else fn
    schedule = merge(getattr(fn, "__npudsl__", Schedule()))
    wrapper = _wrap(inner, schedule)
    if inspect.isclass(obj):
        cls: Any = obj
        cls.forward, cls.__npudsl__ = wrapper, schedule
        return obj
    return cast(F, wrapper)  # the wrapper has the signature of the function it wraps


def _wrap(inner: Callable[..., Any], schedule: Schedule) -> Callable[..., Any]:
    @functools.wraps(inner)
    def run_scheduled(*args: Any, **kwargs: Any) -> Any:
        from npudsl.runtime import eager

        return eager.run(schedule, inner, args, kwargs)

    run_scheduled.__npudsl__ = schedule  # type: ignore[attr-defined]
    return run_scheduled


def _only_once(current: object, decorator: str) -> None:
    if current is not None:
        raise DecoratorError(f"{codes.TWICE} @{decorator} appears twice on one function")


def on_stream(tag: str, priority: int = 0, *, when: str | None = None, sync: str = "auto") -> Callable[[F], F]:
    """Run the body on the stream named ``tag`` ("default" is the main stream)."""
    for violation in (
        _rules.check_tag(tag),
        _rules.check_priority(priority),
        _rules.check_when(when),
        _rules.check_sync(sync),
    ):
        _require(violation)
    spec = StreamSpec(tag=tag, priority=priority, sync=sync, when=when)

    def merge(schedule: Schedule) -> Schedule:
        _only_once(schedule.stream, "on_stream")
        return attrs.evolve(schedule, stream=spec)

    return lambda obj: _apply(obj, "on_stream", merge)


def _event_spec(decorator: str, events: tuple[object, ...], when: str | None) -> EventSpec:
    if not events:
        raise DecoratorError(f"{codes.BAD_ARGUMENTS} @{decorator} needs at least one event name")
    for event in events:
        _require(_rules.check_event(event))
    _require(_rules.check_when(when))
    return EventSpec(events=tuple(str(event) for event in events), when=when)  # each checked to be a str


def after(*events: str, when: str | None = None) -> Callable[[F], F]:
    """Before the body starts, its stream waits for each named event."""
    spec = _event_spec("after", events, when)
    return lambda obj: _apply(obj, "after", lambda s: attrs.evolve(s, waits=(spec, *s.waits)))


def records(*events: str, when: str | None = None) -> Callable[[F], F]:
    """After the body finishes, each named event is recorded on the body's stream."""
    spec = _event_spec("records", events, when)
    return lambda obj: _apply(obj, "records", lambda s: attrs.evolve(s, records=(spec, *s.records)))


def core_limit(aicore: int | str, vector: int | str, *, when: str | None = None) -> Callable[[F], F]:
    """The ops of the body use at most ``aicore`` cube and ``vector`` vector cores; a count given as a dotted
    name (``"self.cfg.aic"``) is read when the body is called, like ``when``."""
    for violation in (
        _rules.check_cores("aicore", aicore),
        _rules.check_cores("vector", vector),
        _rules.check_when(when),
    ):
        _require(violation)
    spec = CoreLimitSpec(aicore=aicore, vector=vector, when=when)

    def merge(schedule: Schedule) -> Schedule:
        _only_once(schedule.core_limit, "core_limit")
        return attrs.evolve(schedule, core_limit=spec)

    return lambda obj: _apply(obj, "core_limit", merge)


def keep_output(obj: Any = None, /, *, clone: bool = False, when: str | None = None) -> Any:
    """Keep the returned tensors valid where they are used (``clone=True``: clone them)."""
    if obj is not None:
        return keep_output(clone=clone, when=when)(obj)
    _require(_rules.check_clone(clone))
    _require(_rules.check_when(when))
    spec = KeepOutputSpec(clone=clone, when=when)

    def merge(schedule: Schedule) -> Schedule:
        _only_once(schedule.keep_output, "keep_output")
        return attrs.evolve(schedule, keep_output=spec)

    return lambda target: _apply(target, "keep_output", merge)
