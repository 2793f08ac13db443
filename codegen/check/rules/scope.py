"""Event scopes and streams as the rules see them.

Event names are scoped to their class (module-level functions: to the module);
the stream of a function is its ``on_stream`` tag, or ``"default"``.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.frontend.ir import Events, ModuleIR, StreamFunction

__all__ = ["EventUse", "by_scope", "event_uses", "scope_name", "stream_of", "where"]

EventUse = tuple[StreamFunction, Events]


def stream_of(fn: StreamFunction) -> str:
    return fn.stream.tag if fn.stream is not None else "default"


def scope_name(owner: str | None) -> str:
    """``class Foo``, or ``module-level functions``: the event scope, for messages."""
    return f"class {owner}" if owner else "module-level functions"


def where(fn: StreamFunction) -> str:
    """``Model.add (line 12)``: how a message names another function."""
    return f"{fn.qualname} (line {fn.loc.line})"


def by_scope(ir: ModuleIR) -> dict[str | None, list[StreamFunction]]:
    """The decorated functions of each event scope (a class, or None for the module), in source order."""
    scopes: dict[str | None, list[StreamFunction]] = {}
    for fn in ir.functions:
        scopes.setdefault(fn.owner, []).append(fn)
    return scopes


def event_uses(functions: list[StreamFunction], kind: str) -> dict[str, list[EventUse]]:
    """Event name -> every (function, decorator) that waits for it (``kind="waits"``) or records it."""
    found: dict[str, list[EventUse]] = {}
    for fn, spec, name in _uses(functions, kind):
        found.setdefault(name, []).append((fn, spec))
    return found


def _uses(functions: list[StreamFunction], kind: str) -> Iterator[tuple[StreamFunction, Events, str]]:
    for fn in functions:
        for spec in getattr(fn, kind):
            for name in spec.names:
                yield fn, spec, name
