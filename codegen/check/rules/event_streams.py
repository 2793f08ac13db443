"""NPD202: one event recorded on two different streams, so a wait for it orders against only one of them."""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.scope import by_scope, event_uses, stream_of, where
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for functions in by_scope(ctx.ir).values():
        for name, uses in event_uses(functions, "records").items():
            first, _ = uses[0]
            for fn, spec in uses[1:]:
                if stream_of(fn) != stream_of(first):
                    yield Finding(
                        loc=spec.loc,
                        message=f'event "{name}" is recorded on stream "{stream_of(fn)}" here and on stream '
                        f'"{stream_of(first)}" by {where(first)}',
                        hint="an event marks one point on one stream; give each stream its own event and wait for both",
                    )


RULE = Rule(code=codes.EVENT_TWO_STREAMS, find=_find)
