"""A decorated function's own steps: one lowering per decorator of the registry, whoever calls the function.

``@after`` waits start the body, ``@records`` records end it (after the clones ``@keep_output(clone=True)``
makes, so an event recorded after them covers them), ``@core_limit`` wraps it; ``@on_stream`` adds nothing
to the body: the switch, fork, join and lifetimes belong to the call sites (``flow/``). ``LOWERINGS`` maps
each decorator of ``npudsl.schedule.DECORATORS`` to its lowering (tests/dsl/test_decorator_registry.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import attrs

from codegen.frontend.ir import CoreLimit, Events, Guard, KeepOutput, Stream, StreamFunction
from codegen.index.index import RunIndex
from codegen.lower.plan import Clone, Cond, Context, FunctionPlan, LimitCores, Record, Step, Wait
from codegen.lower.user_events import UserEvents
from npudsl.schedule import DECORATORS

__all__ = ["LOWERINGS", "lower_function"]


def lower_function(
    fn: StreamFunction,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    module: str,
    index: RunIndex,
    events: UserEvents,
    *,
    event_sync: bool,
) -> FunctionPlan:
    """The plan of one decorated function: what it asks for in its own body, whoever calls it."""
    steps = _Steps(fn=fn, events=events)
    for decorator in DECORATORS:
        for spec in fn.said_by(decorator):
            LOWERINGS[decorator](steps, spec)
    epilogue = (*steps.clones, *steps.records)
    return FunctionPlan(fn=fn, contexts=tuple(steps.contexts), prologue=tuple(steps.prologue), epilogue=epilogue)


@attrs.define(eq=False)
class _Steps:
    """What the decorators of one function add to its body: contexts around it, steps before and after it."""

    fn: StreamFunction
    events: UserEvents
    contexts: list[Context] = attrs.Factory(list)
    prologue: list[Step] = attrs.Factory(list)
    clones: list[Step] = attrs.Factory(list)  # first after the body, so an event recorded after it covers them
    records: list[Step] = attrs.Factory(list)


def _waits(steps: _Steps, spec: Events) -> None:
    for name in spec.names:
        event = attrs.evolve(steps.events.ref(steps.fn.owner, name), waiter=steps.fn.qualname)
        steps.prologue.append(Wait(event=event, when=Cond.of(_when(spec.when))))


def _records(steps: _Steps, spec: Events) -> None:
    for name in spec.names:
        steps.records.append(Record(event=steps.events.ref(steps.fn.owner, name), when=Cond.of(_when(spec.when))))


def _core_limit(steps: _Steps, limit: CoreLimit) -> None:
    stream = steps.fn.stream
    guard = limit.when or (stream.when if stream is not None else None)  # off with the stream's guard
    steps.contexts.append(LimitCores(aicore=limit.aicore, vector=limit.vector, when=Cond.of(_when(guard))))


def _keep_output(steps: _Steps, keep: KeepOutput) -> None:
    if keep.clone:
        steps.clones.append(Clone(when=Cond.of(_when(keep.when))))


def _on_stream(steps: _Steps, stream: Stream) -> None:
    """Nothing in the body: the switch, fork, join and lifetimes belong to the call sites (``flow/``)."""


# Each decorator's lowering, by the registry's names (tests/dsl/test_decorator_registry.py).
LOWERINGS: dict[str, Callable[[_Steps, Any], None]] = {
    "on_stream": _on_stream,
    "after": _waits,
    "records": _records,
    "core_limit": _core_limit,
    "keep_output": _keep_output,
}


def _when(guard: Guard | None) -> str | None:
    return guard.dotted if guard is not None else None
