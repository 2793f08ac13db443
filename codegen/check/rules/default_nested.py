"""NPD504 (warning): an ``@on_stream("default")`` function called from code on another stream (torchair targets).

torchair's stream scopes nest and the inner one wins; the generated code opens
no scope for "default", so the body stays on the caller's side stream. The rule
speaks for the targets with the trait ``nests_stream_scopes`` (aclgraph, ge).
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.targets import get_target
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    if not get_target(ctx.target).nests_stream_scopes:
        return
    for key, calls in ctx.index.stream_calls.items():
        if ctx.index.callees[key].tag != "default":
            continue
        for call in calls:
            if call.module == ctx.ir.module_name and call.caller_stream != "default" and call.loc is not None:
                yield Finding(
                    loc=call.loc,
                    message=f'{key.split(":", 1)[1]} is on stream "default" but {call.caller} calls it on '
                    f'stream "{call.caller_stream}"; under {ctx.target} its body stays on '
                    f'"{call.caller_stream}"',
                    hint="call it from main-stream code, or give it the caller's stream explicitly",
                )


RULE = Rule(code=codes.DEFAULT_NESTED, find=_find)
