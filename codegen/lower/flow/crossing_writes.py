"""Whether a statement, or a planned call, must wait for a pending call for what it writes or reads of objects.

Besides a read of its result (``transfer.py``), a pending call is joined before a planned call on another stream
that writes in place what it reads (on its own stream, the stream orders them), before a planned call on another
stream reading state the pending call may have changed, and before a statement writing in place state the
pending call reads: on the caller's stream (``state_writes.py``: by its spelling or through the functions its
calls run), or in a planned call's body on another stream. Names of state are attribute chains (``self.buf``), a
wildcard (``self.*``) standing for any attribute of the object; two meet as ``paths_meet.py`` says, but for what a
statement reads of a pending call's names (:func:`touches`).
"""

from __future__ import annotations

import ast
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from codegen.lower.flow.paths_meet import any_meet, meets
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
    if site is None or not any_meet(entry.names, site.state):
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
    if not written or not any_meet(read, written):  # a write inside an object given whole meets it too
        return False
    return site is None or relations.consume(entry.site, site.index) != "none"


def touches(names: frozenset[str], reads: AbstractSet[str]) -> bool:
    """``reads`` (a statement's: the names whose data it reads, ``exprs.data_reads``, and what it reads of objects,
    ``state_access.state_reads``) reads one of ``names`` (a pending call's: the names holding its results, the
    state it writes): two meet (``paths_meet.py``), but for an attribute path under a plain name (``y.shape``
    under ``y``, ``self.layers`` under ``self``), which here never needs a join. A read ``y.shape`` of a
    pending ``y``: the data reads list ``y`` itself wherever the statement reads its data through the path
    (they walk the chain to its root), so a path alone is a read of metadata or a view (``aliasing.py``: its
    names then hold the result). A pending ``self.host_cache`` and a read ``self``: every chain the statement
    reads under ``self`` is named (``self.layers``), and ``self`` given whole to a call is read as ``self.*``."""
    return any(meets(n, r) and not _spelled_under(n, r) and not _spelled_under(r, n) for n in names for r in reads)


def _spelled_under(path: str, name: str) -> bool:
    """``path`` is a named attribute path under the plain name ``name`` (``self.buf`` under ``self``)."""
    return name.isidentifier() and path.startswith(f"{name}.") and not path.endswith("*")
