"""NPD507 (warning): a stream is core-limited while a stream that may run beside it is not (seed 004).

An unlimited stream may take every core, so the two together may ask for more
than the device has. The main stream ("default") is always present in a
module that has stream functions: their callers run on it.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.scope import stream_of
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    functions = ctx.ir.functions
    streams = dict.fromkeys(["default", *(stream_of(fn) for fn in functions)])
    limited = {stream_of(fn) for fn in functions if fn.core_limit is not None}
    unlimited = [s for s in streams if s not in limited]
    for fn in functions:
        limit = fn.core_limit
        others = [s for s in unlimited if s != stream_of(fn)]
        if limit is None or not others:
            continue
        yield Finding(
            loc=limit.loc,
            message=f'stream "{stream_of(fn)}" is limited to {limit.aicore}/{limit.vector} cores, but stream '
            f'"{others[0]}" has no core_limit and may take all {ctx.device.aic}/{ctx.device.aiv} of '
            f"{ctx.device.name} beside it",
            hint=f'limit the work on "{others[0]}" too, so that the two add up to at most '
            f"{ctx.device.aic}/{ctx.device.aiv}",
        )


RULE = Rule(code=codes.UNLIMITED_STREAM, find=_find)
