"""The lowered plan: target-independent steps that each target spells in its own API.

A stream function (the *callee*) gets a :class:`FunctionPlan`: contexts around its body, steps
before, at the start and at every exit. A function that calls stream functions (the *caller*)
gets a :class:`CallerPlan`: steps placed before and after its statements, edits of the calls. The steps
themselves are ``steps`` (named here too).
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.ir import StreamFunction
from codegen.lower.steps import (
    Assign,
    Clone,
    Cond,
    Context,
    CurrentStream,
    EventRef,
    ForkToken,
    ForkWait,
    KeepAlive,
    LimitCores,
    Record,
    Step,
    SwitchStream,
    Value,
    Wait,
)

__all__ = [
    "Assign",
    "CallEdit",
    "CallerPlan",
    "Clone",
    "Cond",
    "Context",
    "CurrentStream",
    "EventRef",
    "ForkWait",
    "FunctionPlan",
    "KeepAlive",
    "LimitCores",
    "ModulePlan",
    "Record",
    "Step",
    "SwitchStream",
    "Value",
    "Wait",
    "Wrap",
    "ForkToken",
]


@attrs.frozen(kw_only=True)
class FunctionPlan:
    """How one decorated function's own body is rewritten, whoever calls it and on whichever stream: ``contexts``
    (its core limit) wrap the body, ``prologue`` starts it (its ``@after`` waits), ``epilogue`` ends it at every
    return (clones, its ``@records``). The stream switch belongs to the call sites (:class:`CallerPlan`)."""

    fn: StreamFunction
    contexts: tuple[Context, ...] = ()
    prologue: tuple[Step, ...] = ()
    epilogue: tuple[Step, ...] = ()


@attrs.frozen(kw_only=True)
class Wrap:
    """A statement that runs on another stream: ``with <switch>:`` around it, ``enter`` first inside (the fork's
    wait, waits for other side streams, inputs kept alive for this stream), ``leave`` last inside (the join's
    record). Consecutive wraps with the same switch and nothing between them share one ``with``."""

    switch: SwitchStream
    enter: tuple[Step, ...] = ()
    leave: tuple[Step, ...] = ()


@attrs.frozen(kw_only=True)
class CallEdit:
    """How one call is rewritten: arguments bound to names first (the call reads the names)."""

    hoisted: tuple[tuple[int | str, str], ...] = ()  # (positional index or keyword, name)


Anchor = tuple[str, ast.AST, str]  # ("before" | "after", statement, "") or ("end", node, block field)


@attrs.frozen(kw_only=True)
class CallerPlan:
    """Steps placed in a function that calls stream functions, keyed by where they go."""

    steps: dict[Anchor, tuple[Step, ...]]
    start: tuple[Step, ...] = ()
    calls: dict[ast.Call, CallEdit] = attrs.Factory(dict)
    wraps: dict[ast.stmt, Wrap] = attrs.Factory(dict)
    splits: dict[ast.stmt, str] = attrs.Factory(dict)  # a statement whose first operand a step bound to this name
    moves: dict[ast.stmt, ast.stmt] = attrs.Factory(dict)  # a side call issued right after another (``hoist.py``)


@attrs.frozen(kw_only=True)
class ModulePlan:
    functions: dict[str, FunctionPlan]  # by qualname
    callers: dict[str, CallerPlan]  # by qualname
    events: tuple[EventRef, ...]  # every event the module uses, in first-use order
    imports: tuple[str, ...] = ()  # extra imports the call sites need (a callee's module, for its guard)
