"""Whether the caller's stream may write, after an earlier fork of a side call's stream, state the call reads.

``fork.py`` lets a call go without a fork of its own where an earlier call on its stream forked and the call reads
only what its stream made. State is no name the caller hands over: ``self.side(self.buf)`` or ``self.side(
self.bufs[1])`` passes the object's own memory, which lives on and is never kept alive, and a body may read
``self.buf`` itself. The names said nothing was read, so

    a = self.side(x)          # forks
    self.buf.add_(1)          # the caller's stream writes the state
    b = self.side(self.buf)   # no fork: read on the side stream with no wait after the write

raced on every event target. Where a statement of the caller that may run between that earlier fork and the call
writes in place state the call reads (``state_writes.py``: by its spelling, through the functions its calls run,
or through a local holding the state; named as ``Site.state_read`` names what a call reads), the call forks anew.
A compound statement's header is such a statement too (``header_statements.py``: ``if self.step():``, ``while``
tests, ``for _ in self.fill():``, ``with self.lock(h):``, at any depth), placed at its compound statement.
Planned calls are not the caller's stream's work (``crossing_calls.py`` reads those). "Between" is read on the
source: after the earlier call and before this one, or anywhere in a loop around either (its next iteration).
"""

from __future__ import annotations

import ast

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.crossing_writes import touches
from codegen.lower.flow.header_statements import header_statements
from codegen.lower.flow.sites import Site

__all__ = ["written_since"]

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def written_since(facts: CallerFacts, site: Site, since: int | None) -> bool:
    """A statement of the caller's stream that may run after the call ``since`` (None: anywhere) and before
    ``site`` writes in place state ``site``'s call reads."""
    read = facts.relations.state_of(site.index)
    if not read:
        return False
    planned = {id(s.stmt) for s in facts.sites}
    between = [s for s in facts.simple if id(s) not in planned and _between(facts, s, site, since)]
    headers = [h for s in facts.blocks if _between(facts, s, site, since) for h in header_statements(s)]
    return any(touches(read, set(facts.relations.state_written(s))) for s in [*between, *headers])


def _between(facts: CallerFacts, stmt: ast.stmt, site: Site, since: int | None) -> bool:
    """``stmt`` (or a compound statement's header: ``header_statements.py``) may run after the call ``since`` and
    before ``site``: between them in the source, or in a loop around either (a loop's own header runs again at
    each iteration)."""
    if since is None:
        return True
    earlier = facts.sites[since].stmt
    if earlier.lineno < stmt.lineno < site.stmt.lineno:
        return True
    around = _loops(facts, stmt) | ({id(stmt)} if isinstance(stmt, _LOOPS) else set())
    return bool(around & (_loops(facts, site.stmt) | _loops(facts, earlier)))


def _loops(facts: CallerFacts, stmt: ast.stmt) -> set[int]:
    """The loops around ``stmt`` in its function (by id), also through an ``except`` or ``case`` body."""
    found: set[int] = set()
    parts = _part_owners(facts)
    owner = _owner(facts, parts, stmt)
    while owner is not None:
        if isinstance(owner, _LOOPS):
            found.add(id(owner))
        owner = _owner(facts, parts, owner)
    return found


def _owner(facts: CallerFacts, parts: dict[int, ast.stmt], stmt: ast.stmt) -> ast.stmt | None:
    block = facts.blocks.get(stmt)
    return facts.owner(stmt) or (parts.get(id(block)) if block is not None else None)


_parts: list[tuple[object, dict[int, ast.stmt]]] = []  # the last caller's blocks, and its handlers' and cases' owners


def _part_owners(facts: CallerFacts) -> dict[int, ast.stmt]:
    """Each ``except`` handler's or ``match`` case's body (by identity) -> its ``try`` or ``match`` statement
    (``CallerFacts.owner`` stops there), read once per caller."""
    if _parts and _parts[0][0] is facts.blocks:
        return _parts[0][1]
    found = {
        id(part.body): stmt
        for stmt in facts.blocks
        for part in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ()))
    }
    _parts[:] = [(facts.blocks, found)]
    return found
