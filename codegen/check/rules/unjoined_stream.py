"""NPD511 (warning, targets whose capture joins every stream: cuda, npugraph_ex): a side stream never waited for again.

CUDA graph capture, and newer torch_npu's (error 107025, reference page), require every
stream forked from the capturing stream to rejoin it before capture ends. Automatic synchronization joins each side
stream after its call; with ``sync="manual"`` the join is the user's: some event recorded
on the side stream (``@records``) must be waited for (``@after``) on the main
stream, or on a stream that is itself joined; a stream that records a shared event (``"ns:name"``) is
taken to be joined by whoever waits for it in another class or file. Under torchair (aclgraph, GE) the
graph joins side streams by itself, so the rule speaks for the targets with the trait ``joins_every_stream``
(the native ones).
"""

from __future__ import annotations

from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.scope import by_scope, event_uses, stream_of
from codegen.frontend.ir import StreamFunction
from codegen.targets import get_target
from npudsl import codes
from npudsl._rules import is_shared_event

__all__ = ["RULE"]


def _edges(ctx: Context) -> set[tuple[str, str]]:
    """(recording stream, waiting stream) for each event of each scope."""
    edges: set[tuple[str, str]] = set()
    for functions in by_scope(ctx.ir).values():
        waits = event_uses(functions, "waits")
        for name, records in event_uses(functions, "records").items():
            edges |= {(stream_of(r), stream_of(w)) for r, _ in records for w, _ in waits.get(name, [])}
    return edges


def _joined(ctx: Context) -> set[str]:
    """The main stream, streams joined automatically, and those an event of theirs joins to a joined one."""
    joined = {"default"} | {stream_of(fn) for fn in ctx.ir.functions if fn.auto_sync}
    joined |= {
        stream_of(fn)
        for fn in ctx.ir.functions  # another class or file waits for a shared event
        if any(is_shared_event(name) for spec in fn.records for name in spec.names)
    }
    edges = _edges(ctx)
    grown = True
    while grown:
        more = {source for source, waiter in edges if waiter in joined} - joined
        joined |= more
        grown = bool(more)
    return joined


def _first_on_each_stream(functions: tuple[StreamFunction, ...]) -> dict[str, StreamFunction]:
    first: dict[str, StreamFunction] = {}
    for fn in functions:
        if fn.stream is not None and not fn.stream.is_default:
            first.setdefault(stream_of(fn), fn)
    return first


def _find(ctx: Context) -> Iterator[Finding]:
    if not get_target(ctx.target).joins_every_stream:
        return
    joined = _joined(ctx)
    for tag, fn in _first_on_each_stream(ctx.ir.functions).items():
        if tag in joined:
            continue
        assert fn.stream is not None
        yield Finding(
            loc=fn.stream.loc,
            message=f'stream "{tag}" is never joined: no event recorded on it is waited for on the main stream, '
            "and CUDA graph capture fails unless every forked stream rejoins it",
            hint=f'add @records("{tag}_done") to its last function and @after("{tag}_done") where its work is '
            'used, or drop sync="manual"',
        )


RULE = Rule(code=codes.UNJOINED_STREAM, find=_find)
