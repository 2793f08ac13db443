"""One fork record for several streams: a call may wait for an earlier call's fork record instead of recording
its own, when nothing it needs happened on the caller's stream in between.

omni-infer's decode MoE records one event after the quantization and five streams wait for it, although the
calls on three of them come after more work on the main stream. A call can wait for a record made earlier on
every path to it (in its block, or in a block around it, with no loop between) when, from that record to the
call:

- nothing binds or deletes a name the call reads, or the guard's name, and nothing writes in place (a view
  of what it reads may be written), itself or through a helper of the module (``helper_writes.py``); the call
  reads only what the caller's stream made, or what its own stream made on every path to it (``fork.same_stream``:
  its stream runs that first; a side call's result reaches it through a join or a relay of its own), and an
  earlier call on its stream under its guard may bind such a name in between (vllm-ascend's DSA prolog: the
  scatter reads ``kv`` of the ``wkv`` matmul); an input it writes in place (the scatter's window cache) is one
  the caller's stream neither reads nor writes in between (below);
- the caller's stream stores no attribute, enters no ``with`` of its own, and calls nothing through its object
  that may change what the call reads or writes of it (``object_state.py``: a method of the object may change
  anything; a submodule's call, ``self.q_norm(x)`` or ``self.cv_wq_a.matmul(x)``, only that submodule and what it
  was built from, which the scatter's body, reading ``kv_norm``, does not read);
- the caller's stream reads a result of the call's stream only where it holds that result past the call (reads
  it again after it, on every path, before anything binds it) and the call does not write it. The reason: the
  first call on a stream forks so that the stream's memory is not reused under work the caller issued before. A
  result the caller reads between the record and the call, on its own stream, may be freed after that read (a
  captured graph frees a tensor after its last use) and go, in the stream's pool, to an allocation of the call,
  which waits for nothing the caller did since the record: the caller's read may not have run yet. Held past the
  call, the result is freed only after the call is issued, so none of the call's allocations can take it (a later
  call on the stream asks the same of itself); read for the last time there, the call records its own fork;
- the call's guard is the record's (a flag that says the call forked holds the guard's value there: the same),
  and no hoisted argument of its own is evaluated just before it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import attrs

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.crossing_calls import touches_across
from codegen.lower.flow.exprs import bound_names, data_reads, deleted_names
from codegen.lower.flow.fold import Fork
from codegen.lower.flow.fork import call_inputs, same_stream
from codegen.lower.flow.object_calls import calls_receiver, stores_attribute
from codegen.lower.flow.sites import Site
from codegen.lower.flow.writes import inplace_writes

__all__ = ["earlier_fork"]

_Between = list[ast.stmt | ast.expr]  # whole statements, and the tests of the ``if`` statements around the call


def earlier_fork(facts: CallerFacts, site: Site, recorded: dict[ast.stmt, Fork]) -> Fork | None:
    """The nearest earlier record this call may wait for instead of recording its own: its event, guard, and the
    stream of the call that recorded it (which waited for it in that call's block, on every path to this one:
    a call on that stream needs no wait at all)."""
    sync = facts.syncs[site.index]
    if sync.hoisted or site.state_keeps or not recorded:  # a hoisted argument is made just before the call; an
        # object the caller changes may have changed since (a method call on it): not followed here
        return None
    between: _Between = []
    for block, at, header in _enclosing(facts, site.stmt):
        for earlier in reversed(block[:at]):
            found = recorded.get(earlier)
            if found is not None and facts.same_guard(found[1], sync.guard_text):
                return found if _quiet(facts, site, between) and not _crossing(facts, site, earlier) else None
            between.append(earlier)
        if header is None:
            return None
        between.append(header)
    return None


def _crossing(facts: CallerFacts, site: Site, recording: ast.stmt) -> bool:
    """The call that made the record runs on a third stream and touches what ``site`` writes, or writes what it
    reads: waiting for its fork record orders ``site`` before nothing that call does (``crossing_calls.py``)."""
    recorder = next((s for s in facts.sites if s.stmt is recording), None)
    return recorder is not None and touches_across(facts, site, recorder)


def _enclosing(facts: CallerFacts, stmt: ast.stmt) -> Iterator[tuple[list[ast.stmt], int, ast.expr | None]]:
    """From the innermost out: each block holding ``stmt`` or an ``if`` around it, the index there, and the
    test of that ``if`` (None where the climb stops: a loop, a ``with``, a handler, the function's body)."""
    while True:
        block, owner = facts.block(stmt), facts.owner(stmt)
        yield block, block.index(stmt), owner.test if isinstance(owner, ast.If) else None
        if not isinstance(owner, ast.If):
            return
        stmt = owner


def _quiet(facts: CallerFacts, site: Site, between: _Between) -> bool:
    """Nothing in ``between`` that the call's wait for an earlier record would not order it after."""
    reads = call_inputs(facts, site)
    own = frozenset(same_stream(facts.result.states.get(site.stmt, ()), site, facts.relations))
    made = frozenset().union(*(s.names for s in facts.sites if s is not site), site.names - site.writes)
    if (reads - own) & made:  # what it writes in place of its own inputs: unless read or written in between
        return False
    guard = facts.syncs[site.index].guard_text
    held = reads | ({guard.split(".")[0]} if guard else set())
    look = _Look(
        facts=facts,
        site=site,
        held=frozenset(held),
        own=own,
        mine=frozenset().union(*(s.names for s in facts.sites if s.tag == site.tag)),
        planned={s.stmt: s for s in facts.sites},
        touched=_touched(facts, site),
    )
    return all(look.still(node) for node in _simple(between))


def _simple(between: _Between) -> Iterator[ast.AST]:
    for node in between:
        if isinstance(node, ast.If):
            yield node.test
            yield from _simple([*node.body, *node.orelse])
        else:
            yield node  # a compound statement other than ``if`` fails ``still``


@attrs.frozen(kw_only=True)
class _Look:
    """What one call needs of the caller's stream between the record and the call."""

    facts: CallerFacts
    site: Site
    held: frozenset[str]  # what it reads, and its guard's name
    own: frozenset[str]  # the names holding what its stream made itself, on every path to it
    mine: frozenset[str]  # what calls on its stream make (their results, what they write)
    planned: dict[ast.stmt, Site]
    touched: frozenset[str] | None  # the attributes of the caller's object it reads or writes (None: unknown)

    def still(self, node: ast.AST) -> bool:
        if isinstance(node, ast.stmt) and hasattr(node, "body"):
            return False  # a loop, a ``with``, a ``try``, a ``match``, a definition: not followed here
        other = self.planned.get(node)  # type: ignore[call-overload]
        if other is not None:  # runs on its own stream (this call's too: then in order before it): what its statement
            crossing = touches_across(self.facts, self.site, other)  # binds, and on a third stream what it touches
            return not (bound_names(node) & self.held - self._ordered(other) or crossing)
        if isinstance(node, ast.stmt) and (bound_names(node) | _deleted(node)) & self.held:
            return False
        helped = isinstance(node, ast.stmt) and self.facts.relations.dropped.get(node)  # a helper writes
        if inplace_writes(node) or helped or stores_attribute(node):  # a view of what the call reads may be written
            return False
        return all(self._held_on(name) for name in data_reads(node) & self.mine) and not self._changes_state(node)

    def _ordered(self, other: Site) -> frozenset[str]:
        """What a call on this stream, under this guard, binds that this call reads as that stream's own."""
        guards = self.facts.syncs[other.index].guard_text, self.facts.syncs[self.site.index].guard_text
        return self.own if other.tag == self.site.tag and self.facts.same_guard(*guards) else frozenset()

    def _held_on(self, name: str) -> bool:
        """The caller's stream reads ``name``, a result of this call's stream, and holds it past the call: its
        memory goes to no allocation of this call (see above); nor does this call write it."""
        return name not in self.site.names and _read_after(self.facts, self.site.stmt, name, self.planned)

    def _changes_state(self, node: ast.AST) -> bool:
        """A call through the caller's object may change what this call reads or writes of it
        (``object_state.py``)."""
        state = self.facts.object_state
        if state is None or self.touched is None:
            return calls_receiver(node, self.facts.receiver)
        changes = state.changes(node)
        return "*" in changes or bool(changes and ("*" in self.touched or changes & self.touched))


def _touched(facts: CallerFacts, site: Site) -> frozenset[str] | None:
    """The groups of the caller's attributes that the call, its body and its guard read or write."""
    receiver, state = facts.receiver, facts.object_state
    if receiver is None or state is None:
        return None
    guard = facts.syncs[site.index].guard_text or ""
    paths = [*site.state_read(frozenset()), guard]
    prefix = f"{receiver}."
    return state.touched(p[len(prefix) :].split(".")[0] for p in paths if p.startswith(prefix))


def _read_after(facts: CallerFacts, stmt: ast.stmt, name: str, planned: dict[ast.stmt, Site]) -> bool:
    """A statement of the caller's stream after ``stmt`` that surely runs reads ``name`` before anything binds it
    (from ``stmt`` on in its block, then past the ``if`` around it)."""
    while True:
        block = facts.block(stmt)
        for later in block[block.index(stmt) + 1 :]:
            if later in planned or hasattr(later, "body"):
                return False
            if name in data_reads(later):
                return True
            if name in bound_names(later) or isinstance(later, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
                return False
        owner = facts.owner(stmt)
        if not isinstance(owner, ast.If):
            return False
        stmt = owner


def _deleted(stmt: ast.stmt) -> set[str]:
    return deleted_names(stmt) if isinstance(stmt, ast.Delete) else set()
