"""How decorated code runs when it was not transformed.

:func:`run` gives the decorators their meaning with the traceable runtime ops,
so the same code runs eagerly (real streams on CUDA/NPU, program order on CPU)
and traces into one graph under ``torch.compile(fullgraph=True)``:

1. each decorator whose ``when`` guard is false is ignored;
2. with a stream and ``sync="auto"``: the caller's stream records ``<scope>.<fn>.fork``
   and the side stream waits for it (fork);
3. on the body's stream, under its core limit: wait for each ``@after`` event,
   run the body, record each ``@records`` event;
4. ``@keep_output``: clone the returned tensors (``clone=True``) and, when the body
   ran on a stream, ``record_stream`` them for the caller's stream;
5. with ``sync="auto"``: record ``<scope>.<fn>.join`` on the side stream and make the
   caller's stream wait for it before returning (join).

Event names are scoped like generated code: ``<module>.<class>.<event>`` for
methods, ``<module>.<event>`` for functions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch

from npudsl import _rules, runtime
from npudsl.errors import NpudslError
from npudsl.runtime.guards import guard_holds, read_dotted
from npudsl.schedule import CoreLimitSpec, EventSpec, Schedule

__all__ = ["run"]


@torch.compiler.assume_constant_result
def _scope(fn: Callable[..., Any]) -> str:
    """``<module>.<class>`` for methods, ``<module>`` for functions (a constant while tracing)."""
    owner = fn.__qualname__.rpartition(".")[0]
    return f"{fn.__module__}.{owner}" if owner else fn.__module__


@torch.compiler.assume_constant_result
def _edge(fn: Callable[..., Any]) -> str:
    """Prefix of the fork/join events of ``fn``: ``<scope>.<name>``."""
    return f"{_scope(fn)}.{fn.__name__}"


def _active(spec: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return spec if spec is not None and guard_holds(spec.when, fn, args, kwargs) else None


def _events(
    specs: tuple[EventSpec, ...], fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[str]:
    scope = _scope(fn)
    names: list[str] = []
    for spec in specs:
        if guard_holds(spec.when, fn, args, kwargs):
            names.extend(event if _rules.is_shared_event(event) else f"{scope}.{event}" for event in spec.events)
    return names


def _cores(limit: CoreLimitSpec, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[int]:
    """The two counts; a dotted name is read now and must name a positive integer."""
    counts = []
    for kind, count in (("aicore", limit.aicore), ("vector", limit.vector)):
        value = read_dotted(count, fn, args, kwargs) if isinstance(count, str) else count
        violation = _rules.check_cores(kind, value, dotted=False)
        if violation is not None:
            raise NpudslError(f"{violation.code} core_limit {kind}={count!r} on {fn.__qualname__}: {violation.message}")
        counts.append(value)
    return counts


def _keep(out: Any, clone: bool, caller: str | None) -> Any:
    """Clone and/or ``record_stream`` the tensors returned (top level, tuple or list elements)."""
    if isinstance(out, torch.Tensor):
        kept = out.clone() if clone else out
        if caller is not None:
            runtime.record_stream(kept, caller)
        return kept
    if isinstance(out, (tuple, list)) and not hasattr(out, "_fields"):
        return type(out)(_keep(item, clone, caller) for item in out)
    return out


def run(schedule: Schedule, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call ``fn(*args, **kwargs)`` with the meaning of ``schedule`` (see the module docstring)."""
    stream = _active(schedule.stream, fn, args, kwargs)
    limit = _active(schedule.core_limit, fn, args, kwargs)
    if limit is not None and limit.when is None and schedule.stream is not None and stream is None:
        limit = None  # a core limit without a guard of its own is off with its stream's
    keep = _active(schedule.keep_output, fn, args, kwargs)
    waits = _events(schedule.waits, fn, args, kwargs)
    records = _events(schedule.records, fn, args, kwargs)
    caller = runtime.current_stream()
    linked = stream is not None and stream.sync == "auto"
    edge = _edge(fn)
    if linked:
        runtime.record(f"{edge}.fork")
    with runtime.stream(stream.tag, stream.priority) if stream is not None else contextlib.nullcontext():
        with runtime.core_limit(*_cores(limit, fn, args, kwargs)) if limit is not None else contextlib.nullcontext():
            if linked:
                runtime.wait(f"{edge}.fork")
            for event in waits:
                runtime.wait(event)
            out = fn(*args, **kwargs)
            for event in records:
                runtime.record(event)
            if keep is not None:
                out = _keep(out, keep.clone, caller if stream is not None else None)
            if linked:
                runtime.record(f"{edge}.join")
    if linked:
        runtime.wait(f"{edge}.join")
    return out
