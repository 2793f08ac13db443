"""NPD512 (warning, target ge): an event order that GE cannot carry, because it crosses a run of the graph.

On GE an event is a token that lives for one run of the compiled graph: ``@records("e")`` makes one
token per waiting function, and ``@after("e")`` takes its own out and waits for it (see
``codegen.targets.ge.spelling``; the rule speaks for every target without the trait ``event_sync``). What
that cannot express, found where one function of the event's scope calls both the recorder and the waiter
(``self.m(...)``, or ``m(...)`` for module-level functions):

- a waiter called before any recorder: it takes the token of the previous run's last record, which
  orders nothing in this graph, and that token was an extra output of the previous run;
- a waiter called in a loop (the innermost around it) that calls no recorder: only its first call after a record
  orders, the others find no token;
- a token left in the table when the graph ends, which becomes an extra output of the graph and makes the next
  call recompile: a recorder called after the last waiter of a function that calls both, or a record guarded by
  another ``when=`` than a waiter's (a run where the record happens and the wait does not).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.scope import EventUse, by_scope, event_uses
from codegen.frontend.ir import Guard, Loc
from codegen.index import scan
from codegen.targets import get_target
from npudsl import codes

__all__ = ["RULE"]

_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
Call = tuple[str, ast.Call, tuple[ast.AST, ...]]  # (callee name, call, loops around it)


def _calls(node: ast.AST, owner: str | None, loops: tuple[ast.AST, ...] = ()) -> Iterator[Call]:
    """Calls of this scope's functions in ``node``, in the order they run (a call after its arguments),
    with the loops around each."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield from _calls(child, owner, (*loops, child) if isinstance(child, _LOOPS) else loops)
        name = _callee(child.func, owner) if isinstance(child, ast.Call) else None
        if name is not None and isinstance(child, ast.Call):
            yield name, child, loops


def _callee(func: ast.expr, owner: str | None) -> str | None:
    if owner is None:
        return func.id if isinstance(func, ast.Name) else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return None


def _event_findings(name: str, recorders: set[str], waiters: set[str], calls: list[Call]) -> Iterator[Finding]:
    recorded = [i for i, call in enumerate(calls) if call[0] in recorders]
    waited = [i for i, call in enumerate(calls) if call[0] in waiters]
    if not recorded:
        return
    if waited and recorded[-1] > waited[-1]:
        yield _left_over(name, calls[recorded[-1]][0], calls[recorded[-1]][1])
    first = calls[recorded[0]][1]
    for i, (callee, call, loops) in enumerate(calls):
        if callee not in waiters:
            continue
        if i < recorded[0]:
            yield _before(name, callee, call, first)
        elif loops and not any(loops[-1] in calls[r][2] for r in recorded):
            yield _in_loop(name, callee, call)


def _before(name: str, callee: str, call: ast.Call, first: ast.Call) -> Finding:
    return Finding(
        loc=Loc(line=call.lineno, col=call.col_offset + 1),
        message=f'on GE, {callee} waits for event "{name}" before it is recorded in this run (line {first.lineno}): '
        "it takes the token of the previous run, which orders nothing in this graph and was an extra "
        "output of the previous run",
        hint='call the recorder first, or let npudsl order the calls (sync="auto"); GE orders only within one run',
    )


def _in_loop(name: str, callee: str, call: ast.Call) -> Finding:
    return Finding(
        loc=Loc(line=call.lineno, col=call.col_offset + 1),
        message=f'on GE, {callee} waits for event "{name}" in a loop that does not record it: each record is one '
        "token, taken by the first wait, so later iterations are not ordered",
        hint="record the event in the same loop, or wait once before the loop",
    )


def _left_over(name: str, callee: str, call: ast.Call) -> Finding:
    return Finding(
        loc=Loc(line=call.lineno, col=call.col_offset + 1),
        message=f'on GE, {callee} records event "{name}" after its last wait in this function: the token is left '
        "over when the graph ends, an extra output of the graph that makes the next call recompile",
        hint="wait for the event after this record, or drop the record",
    )


def _guards_differ(name: str, records: list[EventUse], waits: list[EventUse]) -> Iterator[Finding]:
    """A record guarded otherwise than a wait: a run may record without waiting, leaving the token over."""
    for waiter, wait in waits:
        for recorder, record in records:
            if record.when != wait.when:
                yield Finding(
                    loc=record.loc,
                    message=f'on GE, {recorder.name} records event "{name}" {_guard(record.when)} but '
                    f"{waiter.name} waits for it {_guard(wait.when)}: a run that records and does not wait "
                    "leaves the token over, an extra output that makes the next call recompile",
                    hint="give the record and the wait the same when=",
                )


def _guard(when: Guard | None) -> str:
    return f'when "{when.dotted}" holds' if when else "always"


def _find(ctx: Context) -> Iterator[Finding]:
    if get_target(ctx.target).event_sync or ctx.tree is None:
        return
    bodies = scan.functions_by_qualname(ctx.tree)
    for owner, functions in by_scope(ctx.ir).items():
        waited, recorded = event_uses(functions, "waits"), event_uses(functions, "records")
        if not waited.keys() & recorded.keys():
            continue
        scope_calls = [
            list(_calls(body, owner))
            for qualname, body in bodies.items()
            if (qualname.rpartition(".")[0] or None) == owner
        ]
        for name, records in recorded.items():
            yield from _guards_differ(name, records, waited.get(name, []))
            recorders = {fn.name for fn, _ in records}
            waiters = {fn.name for fn, _ in waited.get(name, [])}
            for calls in scope_calls:
                yield from _event_findings(name, recorders, waiters, calls)


RULE = Rule(code=codes.GE_EVENT_RUNS, find=_find)
