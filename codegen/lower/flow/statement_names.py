"""What a plain statement does to the names that hold pending results: which it reads, which hold them after it.

The transfer (``transfer.py``) joins a pending call before the first statement that reads the data of a name holding
its result. ``y = x`` and ``t = (x, z)`` only copy references: they read nothing, and the new names hold the result
too; ``xs[i] = t`` stores into a container the caller owns and reads none of its items (``item_stores.py``).
Rebinding or deleting a name drops it.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.aliasing import alias_groups, aliasing, rerooted
from codegen.lower.flow.exprs import bound_names, data_reads, deleted_names
from codegen.lower.flow.item_stores import stored_only
from codegen.lower.flow.state import State, renamed

__all__ = ["data_read", "rebound"]


def data_read(stmt: ast.stmt) -> set[str]:
    """The names whose data a plain statement reads on the caller's stream: none where it only copies references
    or takes views (``aliasing.py``) or deletes; an augmented name target too."""
    if aliasing(stmt) is not None or isinstance(stmt, ast.Delete):
        return set()
    reads = data_reads(stmt) - stored_only(stmt)  # an item stored into a container reads none of its items
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        reads.add(stmt.target.id)
    return reads


def rebound(stmt: ast.stmt, state: State) -> State:
    """Names the statement binds or deletes no longer hold what they held; aliases hold it too, surely only where
    all they copy held it (``t = (q, g)`` holds the caller's ``g`` as well as ``q``)."""
    written = deleted_names(stmt) if isinstance(stmt, ast.Delete) else bound_names(stmt)
    groups = alias_groups(stmt)
    update: dict[int, frozenset[str]] = {}
    mixed: dict[int, frozenset[str]] = {}
    for entry in state:
        names = set(entry.names - written)
        for targets, sources in groups:
            held = entry.names & sources
            if held:
                names |= targets
                mixed[entry.site] = mixed.get(entry.site, frozenset()) | (targets if held != sources else set())
            names |= rerooted(entry.names, targets, sources)
        update[entry.site] = frozenset(names)
    return renamed(state, update, mixed)
