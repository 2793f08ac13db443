"""A sibling's ``if`` holding its side calls runs inside one block, forked before the ``if``: on every path.

``sibling_fork.py`` lets a private method's first side call go without a fork where its caller ran, just before, a
sibling that forked the same stream on every path. vllm-ascend's DeepSeek-V4 indexer quantizes the compressed keys
into its key cache only ``if kv is not None:``; its block forked under that test, so the sibling after it could not
count on it. As the hand-written version does, the fork moves before the ``if`` and the ``if`` goes inside the
block:

    if self.multistream:
        runtime.record(fork)
    with runtime.stream(overlap) if self.multistream else nullcontext():
        if self.multistream:
            runtime.wait(fork)
        if kv is not None:
            ...                      # the calls, their inputs kept alive, their join recorded under their flag

Where the test fails, the stream is switched to and waits for the fork, and nothing else runs there: one switch,
one record and one wait more on those batches, none on the others (the sibling's fork is gone on both). The
``if``'s test runs no op (``quiet_tests.identity_test``), so it may run with the side stream current; every call
in it is on that stream (``sibling_fork.py``), so the caller's stream issues nothing between the fork and them: the
forks of the calls inside are this one's, and their records and waits go. What else their blocks started with
(inputs kept alive, waits for other streams) stays before each call, and what they ended with (their join's
record, under the flag that says they ran) after it. A step of the caller's own stream inside the ``if`` (a wait
for a join, a result kept for the caller's stream) would now run on the side stream: the rule's premise rules
those out, and finding one is an internal error, never a quiet race.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.plan import Anchor, Cond, CurrentStream, EventRef, KeepAlive, Record, Step, SwitchStream, Wait, Wrap

__all__ = ["every_path_fork"]

Steps = dict[Anchor, list[Step]]
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def every_path_fork(
    fn: _Function, wraps: dict[ast.stmt, Wrap], facts: CallerFacts, steps: Steps, hoisted: frozenset[ast.stmt]
) -> None:
    """Each ``if`` of ``hoisted`` in one block forked before it (``wraps`` and ``steps`` changed in place); ``fn``
    may be a copy whose ``if``s took in later ones (``hoist.py``), each copy on the line of what it copies."""
    lines = {(st.lineno, st.col_offset) for st in hoisted}
    for x in (st for st in fn.body if isinstance(st, ast.If) and (st.lineno, st.col_offset) in lines):
        inside = [st for st in walked_of(x, ast.stmt) if st is not x]
        inner = [st for st in inside if st in wraps]
        sites = [s for s in facts.sites if s.stmt in inside]
        if not inner or not sites:
            raise AssertionError(f"every_path_fork: no side call in the if at line {x.lineno}")
        guard = Cond.of(facts.syncs[sites[0].index].guard_text)
        forks = _fork_events(wraps, steps, inner, [x, *inside])
        first = next((s.event for s in wraps[inner[0]].enter if isinstance(s, Wait) and s.event in forks), None)
        if first is None:
            raise AssertionError(f"every_path_fork: the first side call at line {inner[0].lineno} does not fork")
        switch = _switch(wraps, inner, guard)
        _caller_side_only(steps, inside, forks)
        _unwrapped(wraps, steps, inner, forks, [x, *inside])
        steps.setdefault(("before", x, ""), []).append(Record(event=first, when=guard))
        wraps[x] = Wrap(switch=switch, enter=(Wait(event=first, when=guard),))


def _fork_events(
    wraps: dict[ast.stmt, Wrap], steps: Steps, inner: list[ast.stmt], at: list[ast.stmt]
) -> list[EventRef]:
    """The events the blocks inside wait for first that the caller's stream records just before a statement of
    the ``if``: their forks (a wait for another stream's join stays)."""
    recorded = {s.event for st in at for s in steps.get(("before", st, ""), []) if isinstance(s, Record)}
    return [s.event for st in inner for s in wraps[st].enter if isinstance(s, Wait) and s.event in recorded]


def _switch(wraps: dict[ast.stmt, Wrap], inner: list[ast.stmt], guard: Cond | None) -> SwitchStream:
    """The blocks' stream and priority (one: ``sibling_fork.py``), switched to where the guard holds."""
    switches = {(wraps[st].switch.tag, wraps[st].switch.priority) for st in inner}
    if len(switches) != 1:
        raise AssertionError(f"every_path_fork: blocks on {len(switches)} streams in one if")
    ((tag, priority),) = switches
    return SwitchStream(tag=tag, priority=priority, when=guard)


def _caller_side_only(steps: Steps, inside: list[ast.stmt], forks: list[EventRef]) -> None:
    """No step inside the ``if`` but the forks' records is the caller's stream's own work (a wait for a join, a
    result kept for it, another record)."""
    ids = {id(st) for st in inside}
    for anchor, found in steps.items():
        if id(anchor[1]) in ids and any(_callers(s, forks) for s in found):
            raise AssertionError(f"every_path_fork: a step of the caller's stream at {ast.dump(anchor[1])[:60]}")


def _callers(step: Step, forks: list[EventRef]) -> bool:
    kept = isinstance(step, KeepAlive) and isinstance(step.stream, CurrentStream)
    return kept or isinstance(step, Wait) or (isinstance(step, Record) and step.event not in forks)


def _unwrapped(
    wraps: dict[ast.stmt, Wrap], steps: Steps, inner: list[ast.stmt], forks: list[EventRef], at: list[ast.stmt]
) -> None:
    """The blocks inside taken apart: their forks' records and waits dropped, what else they started with placed
    before their statement, what they ended with after it."""
    for stmt in at:
        for anchor in (("before", stmt, ""), ("after", stmt, "")):
            if anchor in steps:
                steps[anchor] = [s for s in steps[anchor] if not (isinstance(s, Record) and s.event in forks)]
    for stmt in inner:
        wrap = wraps.pop(stmt)
        enter = [s for s in wrap.enter if not (isinstance(s, Wait) and s.event in forks)]
        steps.setdefault(("before", stmt, ""), []).extend(enter)
        steps[("after", stmt, "")] = [*wrap.leave, *steps.get(("after", stmt, ""), [])]
