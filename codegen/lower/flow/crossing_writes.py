"""Whether a statement, or a planned call, must wait for a pending call for what it writes or reads of objects.

Besides a read of its result (``transfer.py``), a pending call is joined before a planned call on another stream
that writes in place what it reads (on its own stream, the stream orders them), before a planned call on another
stream reading state the pending call may have changed, and before a statement writing in place state the
pending call reads: on the caller's stream (``state_writes.py``: by its spelling or through the functions its
calls run), or in a planned call's body on another stream. Names of state are attribute chains (``self.buf``), a
wildcard (``self.*``) standing for any attribute of the object (:func:`touches`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow.state import Pending

if TYPE_CHECKING:
    from codegen.lower.flow.transfer import Relations, SiteView

__all__ = ["state_crosses", "state_written", "touches", "writes_apart"]


def writes_apart(entry: Pending, site: SiteView | None, relations: Relations) -> bool:
    """The call writes in place what ``entry`` reads, on another stream (after it on its own stream, it waits)."""
    if site is None or not entry.inputs & site.writes:
        return False
    return relations.consume(entry.site, site.index) != "none"


def state_crosses(entry: Pending, site: SiteView | None, relations: Relations) -> bool:
    """The call reads state ``entry`` may have changed, on another stream (its own stream's needs no join)."""
    if site is None or not touches(entry.names, set(site.state)):
        return False
    return relations.consume(entry.site, site.index) != "none"


def state_written(
    entry: Pending, stmt: ast.stmt, site: SiteView | None, relations: Relations, apart: frozenset[str] = frozenset()
) -> bool:
    """The statement writes in place state ``entry``'s call reads: on the caller's stream (``state_writes.py``), or
    a planned call's body on another stream (on its own stream, it runs after it)."""
    read = relations.state_of(entry.site)
    if not read:
        return False
    chains = frozenset(c for c in apart if "." in c)  # this micro-batch's object: ``item_apart.py``
    written = set(site.state_writes) if site is not None else set(relations.state_written(stmt, chains))
    if not written or not (touches(read, written) or _inside(read, written)):
        return False
    return site is None or relations.consume(entry.site, site.index) != "none"


def _inside(read: frozenset[str], written: set[str]) -> bool:
    """A write inside an object the call was given whole: ``self.d.buf`` of ``self.dispatch(self.d)``."""
    return any(w.startswith(f"{r}.") for r in read for w in written)


def touches(names: frozenset[str], reads: set[str]) -> bool:
    """``reads`` reads one of ``names``: a name, an attribute of an object (``self.buf``), or, through a wildcard
    (``self.*``) on either side, any attribute of that object."""
    if names & reads:
        return True
    held = {n[:-1] for n in names if n.endswith(".*")}
    called = {r[:-1] for r in reads if r.endswith(".*")}
    return any(r.startswith(p) for p in held for r in reads) or any(n.startswith(p) for p in called for n in names)
