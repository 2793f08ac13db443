"""NPD505 (warning): an event recorded but never waited for in its scope: the record orders nothing."""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.scope import by_scope, event_uses, scope_name
from npudsl import codes
from npudsl._rules import is_shared_event

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for owner, functions in by_scope(ctx.ir).items():
        waited = event_uses(functions, "waits")
        for name, uses in event_uses(functions, "records").items():
            if is_shared_event(name):
                continue  # its waiters may be in other classes and files
            if name in waited:
                continue
            for fn, spec in uses:
                yield Finding(
                    loc=spec.loc,
                    message=f'{fn.qualname} records event "{name}", but no function in {scope_name(owner)} '
                    "waits for it",
                    hint=f'add @after("{name}") where that work is needed, or drop the record',
                )


RULE = Rule(code=codes.UNUSED_RECORD, find=_find)
