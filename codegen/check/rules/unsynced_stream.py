"""NPD506 (warning): a side stream whose functions all use ``sync="manual"`` and never wait for anything.

In reduce-overhead mode torchair forks every side stream from the start of the
graph; without a wait, its work may read tensors the main stream has not
written yet.
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.scope import by_scope, scope_name, stream_of
from codegen.frontend.ir import StreamFunction
from npudsl import codes

__all__ = ["RULE"]


def _find(ctx: Context) -> Iterator[Finding]:
    for owner, functions in by_scope(ctx.ir).items():
        for tag, members in _side_streams(functions).items():
            if any(fn.auto_sync or fn.waits for fn in members):
                continue
            first = members[0]
            assert first.stream is not None
            yield Finding(
                loc=first.stream.loc,
                message=f'stream "{tag}" never waits for anything in {scope_name(owner)}: its work may start '
                "before its inputs are written",
                hint='add @after("event") for the work it reads, or drop sync="manual" for automatic fork/join',
            )


def _side_streams(functions: list[StreamFunction]) -> dict[str, list[StreamFunction]]:
    streams: dict[str, list[StreamFunction]] = {}
    for fn in functions:
        if stream_of(fn) != "default":
            streams.setdefault(stream_of(fn), []).append(fn)
    return streams


RULE = Rule(code=codes.UNSYNCED_STREAM, find=_find)
