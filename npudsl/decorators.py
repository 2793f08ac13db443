"""The five decorators of the public contract.

Each checks its literal arguments at decoration time with the rules of its
registry entry (:data:`npudsl.schedule.DECORATORS`, the rules the transformer
applies to the source), adds what it says to the function's
:class:`~npudsl.schedule.Schedule` (``fn.__npudsl__``), and wraps the undecorated
function once, so stacked decorators in any order give the same schedule.
Untransformed, the wrapper runs the body through the eager runtime with the
same meaning as the generated code.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

from npudsl import codes
from npudsl._registry import Twice
from npudsl.errors import DecoratorError
from npudsl.schedule import DECORATORS, Schedule

__all__ = ["after", "core_limit", "keep_output", "on_stream", "records"]

F = TypeVar("F", bound=Callable[..., Any])


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


def _apply(obj: F, decorator: str, merge: Callable[[Schedule[None]], Schedule[None]]) -> F:
    fn = _target_function(obj, decorator)
    inner = getattr(fn, "__wrapped__", fn) if hasattr(fn, "__npudsl__") else fn
    schedule = merge(getattr(fn, "__npudsl__", Schedule()))
    wrapper = _wrap(inner, schedule)
    if inspect.isclass(obj):
        cls: Any = obj
        cls.forward, cls.__npudsl__ = wrapper, schedule
        return obj
    return cast(F, wrapper)  # the wrapper has the signature of the function it wraps


def _wrap(inner: Callable[..., Any], schedule: Schedule[None]) -> Callable[..., Any]:
    @functools.wraps(inner)
    def run_scheduled(*args: Any, **kwargs: Any) -> Any:
        from npudsl.runtime import eager

        return eager.run(schedule, inner, args, kwargs)

    run_scheduled.__npudsl__ = schedule  # type: ignore[attr-defined]
    return run_scheduled


def _declare(name: str, **arguments: object) -> Callable[[F], F]:
    """The decorator ``@name(**arguments)``, its arguments checked now by its registry entry."""
    decorator = DECORATORS[name]
    found = decorator.violation(arguments)
    if found is not None:
        violation = found[1]
        raise DecoratorError(f"{violation.code} {violation.message} (hint: {violation.hint})")
    spec = decorator.make(arguments, loc=None)

    def merge(schedule: Schedule[None]) -> Schedule[None]:
        try:
            return decorator.add(schedule, spec, outer=True)  # decorators apply from the innermost up
        except Twice:
            raise DecoratorError(f"{codes.TWICE} @{name} appears twice on one function") from None

    return lambda obj: _apply(obj, name, merge)


def on_stream(tag: str, priority: int = 0, *, when: str | None = None, sync: str = "auto") -> Callable[[F], F]:
    """Run the body on the stream named ``tag`` ("default" is the main stream)."""
    return _declare("on_stream", tag=tag, priority=priority, when=when, sync=sync)


def after(*events: str, when: str | None = None) -> Callable[[F], F]:
    """Before the body starts, its stream waits for each named event."""
    return _declare("after", events=events, when=when)


def records(*events: str, when: str | None = None) -> Callable[[F], F]:
    """After the body finishes, each named event is recorded on the body's stream."""
    return _declare("records", events=events, when=when)


def core_limit(aicore: int | str, vector: int | str, *, when: str | None = None) -> Callable[[F], F]:
    """The ops of the body use at most ``aicore`` cube and ``vector`` vector cores; a count given as a dotted
    name (``"self.cfg.aic"``) is read when the body is called, like ``when``."""
    return _declare("core_limit", aicore=aicore, vector=vector, when=when)


def keep_output(obj: Any = None, /, *, clone: bool = False, when: str | None = None) -> Any:
    """Keep the returned tensors valid where they are used (``clone=True``: clone them)."""
    if obj is not None:
        return keep_output(clone=clone, when=when)(obj)
    return _declare("keep_output", clone=clone, when=when)
