"""The lowered plan: target-independent steps that each target spells in its own API."""

from __future__ import annotations

import attrs

from codegen.ir import Guard, StreamFunction

__all__ = [
    "Clone",
    "EventRef",
    "FunctionPlan",
    "JoinRule",
    "KeepAlive",
    "LimitCores",
    "ModulePlan",
    "Record",
    "SwitchStream",
    "Wait",
]


@attrs.frozen(kw_only=True)
class EventRef:
    var: str  # the module-level variable that holds the event
    tag: str  # its process-global tag
    source: str | None = None  # module to import it from, when another module defines it
    user: bool = False  # named by @after/@records (not a fork or join of the automatic synchronization)
    name: str = ""  # the user's event name, for user events


@attrs.frozen(kw_only=True)
class SwitchStream:
    tag: str
    priority: int
    when: Guard | None


@attrs.frozen(kw_only=True)
class LimitCores:
    aicore: int
    vector: int
    when: Guard | None


@attrs.frozen(kw_only=True)
class Record:
    event: EventRef
    when: Guard | None


@attrs.frozen(kw_only=True)
class Wait:
    event: EventRef
    when: Guard | None


@attrs.frozen(kw_only=True)
class KeepAlive:
    """``record_stream`` tensors for the stream that consumes them: the named ``tensors``, or, when
    none are named, each returned tensor."""

    stream: str
    when: Guard | None
    tensors: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Clone:
    """Replace each returned tensor by a clone."""

    when: Guard | None


Context = SwitchStream | LimitCores
Step = Record | Wait | KeepAlive | Clone


@attrs.frozen(kw_only=True)
class FunctionPlan:
    """How one decorated function is rewritten.

    ``before`` runs on the caller's stream, ``contexts`` wrap the body, ``prologue``
    starts it, ``epilogue`` ends it at every return (it sees the returned values),
    and ``self_join`` runs on the caller's stream once the contexts are left.
    """

    fn: StreamFunction
    before: tuple[Step, ...] = ()
    contexts: tuple[Context, ...] = ()
    prologue: tuple[Step, ...] = ()
    epilogue: tuple[Step, ...] = ()
    self_join: Wait | None = None


@attrs.frozen(kw_only=True)
class JoinRule:
    """In ``caller``, a call of ``self.<attr>(...)`` (or ``attr(...)``) is joined by ``wait``."""

    caller: str
    attr: str
    on_self: bool
    wait: Wait


@attrs.frozen(kw_only=True)
class ModulePlan:
    functions: dict[str, FunctionPlan]  # by qualname
    joins: tuple[JoinRule, ...]
    events: tuple[EventRef, ...]  # every event the module uses, in first-use order
