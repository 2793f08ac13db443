"""One fork record for several streams: a call may wait for an earlier call's fork record instead of recording
its own, when nothing it needs happened on the caller's stream in between.

omni-infer's decode MoE records one event after the quantization and five streams wait for it, although the
calls on three of them come after more work on the main stream. A call can wait for a record made earlier on
every path to it (in its block, or in a block around it, with no loop between) when, from that record to the
call:

- nothing binds or deletes a name the call reads, or the guard's name, and nothing writes in place (a view
  of what it reads may be written), itself or through a helper of the module (``helper_writes.py``); the call
  reads only what the caller's stream made (a side call's result
  reaches it through a join or a relay of its own);
- the caller's stream stores no attribute and calls nothing on its own object (the call's body may read that
  state), reads no result of the call's stream (so that stream's memory is not reused under such a read: the
  reason the first call on a stream forks at all), and enters no ``with`` of its own;
- the call's guard is the record's (a flag that says the call forked holds the guard's value there: the same),
  and no hoisted argument of its own is evaluated just before it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names, data_reads, deleted_names
from codegen.lower.flow.fold import Fork
from codegen.lower.flow.fork import call_inputs
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
                return found if _quiet(facts, site, between) else None
            between.append(earlier)
        if header is None:
            return None
        between.append(header)
    return None


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
    made = frozenset().union(*(s.names for s in facts.sites))
    if reads & made:
        return False
    guard = facts.syncs[site.index].guard_text
    held = reads | ({guard.split(".")[0]} if guard else set())
    mine = frozenset().union(*(s.names for s in facts.sites if s.tag == site.tag))
    planned = {s.stmt: s for s in facts.sites}
    return all(_still(facts, node, held, mine, planned) for node in _simple(between))


def _simple(between: _Between) -> Iterator[ast.AST]:
    for node in between:
        if isinstance(node, ast.If):
            yield node.test
            yield from _simple([*node.body, *node.orelse])
        else:
            yield node  # a compound statement other than ``if`` fails ``_still``


def _still(
    facts: CallerFacts, node: ast.AST, held: set[str], mine: frozenset[str], planned: dict[ast.stmt, Site]
) -> bool:
    if isinstance(node, ast.stmt) and hasattr(node, "body"):
        return False  # a loop, a ``with``, a ``try``, a ``match``, a definition: not followed here
    other = planned.get(node)  # type: ignore[call-overload]
    if other is not None:  # runs on its own stream (this call's too: then in order before it): only what its
        return not (bound_names(node) & held)  # statement binds matters
    if isinstance(node, ast.stmt) and (bound_names(node) | _deleted(node)) & held:
        return False
    helped = isinstance(node, ast.stmt) and facts.relations.dropped.get(node)  # a helper of the module writes
    if inplace_writes(node) or helped or _stores_attribute(node):  # a view of what the call reads may be written
        return False
    return not (data_reads(node) & mine) and not _calls_receiver(node, facts.receiver)


def _deleted(stmt: ast.stmt) -> set[str]:
    return deleted_names(stmt) if isinstance(stmt, ast.Delete) else set()


def _stores_attribute(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) for t in scan.assignment_targets(node) for n in ast.walk(t))


def _calls_receiver(node: ast.AST, receiver: str | None) -> bool:
    """A call of something on the caller's object, or with the object passed on (``self.helper(x)``,
    ``self.cache.append(t)``, ``helper(self)``): it may change what the call's body or guard reads."""
    if receiver is None:
        return False
    for call in walked_of(node, ast.Call):
        passed = [*call.args, *(k.value for k in call.keywords)]
        root = (scan.dotted_name(call.func) or "").split(".")[0]
        if root == receiver or any(isinstance(a, ast.Name) and a.id == receiver for a in passed):
            return True
    return False
