"""How decorated code runs when it was not transformed.

:func:`run` gives the decorators their meaning with the traceable runtime ops,
so the same code runs eagerly (real streams on CUDA/NPU, program order on CPU)
and traces into one graph under ``torch.compile(fullgraph=True)``:

1. each decorator whose ``when`` guard is false is ignored;
2. with a stream and ``sync="auto"``: the fork of :mod:`npudsl.forkjoin`, the edge
   being ``<scope>.<fn>``;
3. on the body's stream, under its core limit: wait for each ``@after`` event,
   run the body, record each ``@records`` event;
4. ``@keep_output``: clone the returned tensors (``clone=True``) and, when the body
   ran on a stream, ``record_stream`` them for the caller's stream;
5. with ``sync="auto"``: the join, right after the call (the caller's uses of the
   result are not seen here).

Event names are scoped like generated code: ``<module>.<class>.<event>`` for
methods, ``<module>.<event>`` for functions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

from npudsl import _rules, forkjoin, runtime
from npudsl.errors import NpudslError
from npudsl.runtime.guards import guard_holds, read_dotted
from npudsl.schedule import CoreLimitSpec, EventSpec, Guard, Schedule, StreamSpec

__all__ = ["run"]

Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]  # the function, its arguments


@torch.compiler.assume_constant_result
def _scope(fn: Callable[..., Any]) -> str:
    """``<module>.<class>`` for methods, ``<module>`` for functions (a constant while tracing)."""
    owner = fn.__qualname__.rpartition(".")[0]
    return f"{fn.__module__}.{owner}" if owner else fn.__module__


@torch.compiler.assume_constant_result
def _edge(fn: Callable[..., Any]) -> str:
    """What the fork and join events of ``fn`` are named after: ``<scope>.<name>``."""
    return f"{_scope(fn)}.{fn.__name__}"


def _holds(when: Guard | None, call: Call) -> bool:
    return guard_holds(when.dotted if when is not None else None, *call)


def _active(spec: Any, call: Call) -> Any:
    return spec if spec is not None and _holds(spec.when, call) else None


def _events(specs: tuple[EventSpec[None], ...], call: Call) -> list[str]:
    scope = _scope(call[0])
    names: list[str] = []
    for spec in specs:
        if _holds(spec.when, call):
            names.extend(event if _rules.is_shared_event(event) else f"{scope}.{event}" for event in spec.names)
    return names


def _cores(limit: CoreLimitSpec[None], call: Call) -> list[int]:
    """The two counts; a dotted name is read now and must name a positive integer."""
    counts = []
    for kind, count in (("aicore", limit.aicore), ("vector", limit.vector)):
        value = read_dotted(count, *call) if isinstance(count, str) else count
        violation = _rules.check_cores(kind, value, dotted=False)
        if violation is not None:
            where = call[0].__qualname__
            raise NpudslError(f"{violation.code} core_limit {kind}={count!r} on {where}: {violation.message}")
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


class _Issuer:
    """The runtime ops issue :mod:`npudsl.forkjoin`'s steps on the current stream."""

    record = staticmethod(runtime.record)
    wait = staticmethod(runtime.wait)


@contextlib.contextmanager
def _on(stream: StreamSpec[None] | None, limit: CoreLimitSpec[None] | None, call: Call) -> Iterator[None]:
    """The body's stream and its core limit, each when there is one."""
    with runtime.stream(stream.tag, stream.priority) if stream is not None else contextlib.nullcontext():
        with runtime.core_limit(*_cores(limit, call)) if limit is not None else contextlib.nullcontext():
            yield


def run(schedule: Schedule[None], fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Call ``fn(*args, **kwargs)`` with the meaning of ``schedule`` (see the module docstring)."""
    call: Call = (fn, args, kwargs)
    stream, limit = _active(schedule.stream, call), _active(schedule.core_limit, call)
    if limit is not None and limit.when is None and schedule.stream is not None and stream is None:
        limit = None  # a core limit without a guard of its own is off with its stream's
    keep = _active(schedule.keep_output, call)
    waits, records = _events(schedule.waits, call), _events(schedule.records, call)
    caller, edge = runtime.current_stream(), _edge(fn)
    linked = stream is not None and stream.sync == "auto"
    switch = _on(stream, limit, call)
    with forkjoin.forked(_Issuer, edge, switch) if linked else switch:
        for event in waits:
            runtime.wait(event)
        out = fn(*args, **kwargs)
        for event in records:
            runtime.record(event)
        if keep is not None:
            out = _keep(out, keep.clone, caller if stream is not None else None)
    if linked:
        forkjoin.join(_Issuer, edge)
    return out
