"""NPD201: an event is waited for but never recorded in its scope, so the wait orders nothing.

A shared event (``"ns:name"``) has the whole run as its scope: NPD514 (a warning, since a file of another run
may record it) when no function of the run records it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.scope import by_scope, event_uses, scope_name
from codegen.frontend.ir import StreamFunction
from npudsl import codes
from npudsl._rules import is_shared_event

__all__ = ["RULE", "SHARED_RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    scopes = by_scope(ctx.ir)
    for owner, functions in scopes.items():
        recorded = event_uses(functions, "records")
        for name, uses in event_uses(functions, "waits").items():
            if name in recorded or is_shared_event(name):
                continue
            hint = _hint(name, owner, sorted(recorded), scopes)
            for fn, spec in uses:
                yield Finding(
                    loc=spec.loc,
                    hint=hint,
                    message=f'{fn.qualname} waits for event "{name}", but no '
                    f"function in {scope_name(owner)} records it",
                )


def _hint(name: str, owner: str | None, recorded: list[str], scopes: dict[str | None, list[StreamFunction]]) -> str:
    close = difflib.get_close_matches(name, recorded, n=1)
    if close:
        return f'did you mean "{close[0]}"?'
    elsewhere = [o for o, fns in scopes.items() if o != owner and name in event_uses(fns, "records")]
    if elsewhere:
        return (
            f'"{name}" is recorded in {scope_name(elsewhere[0])}; event names are scoped to their class, '
            "so record it in this one"
        )
    return f'add @records("{name}") to the function whose work must finish first'


def _find_shared(ctx: Context) -> Iterator[Finding]:
    for functions in by_scope(ctx.ir).values():
        for name, uses in event_uses(functions, "waits").items():
            if not is_shared_event(name) or name in ctx.index.shared_records:
                continue
            for fn, spec in uses:
                yield Finding(
                    loc=spec.loc,
                    message=f'{fn.qualname} waits for the shared event "{name}", but no '
                    "function of this run records it",
                    hint=f'add @records("{name}") where that work ends, or transform its file in the same run',
                )


RULE = Rule(code=codes.UNKNOWN_EVENT, find=_find)
SHARED_RULE = Rule(code=codes.SHARED_EVENT_NOWHERE, find=_find_shared)
