"""Whether two paths of state may name the same memory: one matcher for every rule that compares them.

The planner names what a call or a statement reads and writes of objects by paths: an attribute chain
(``self.buf``, ``self.sub.scale``), an item under one (``self.buf[0]``), a whole object's attributes (``self.*``,
``sub.*``), or anything at all (``*``). Two paths meet where one is the other or lies under it: ``self.buf`` and
``self.buf.x`` or ``self.buf[0]`` (a write of the part is a write of the whole's memory, a read of the whole reads
the part), ``self.*`` and ``self.buf`` or ``self.sub.scale``, ``*`` and any path. A rule that needs less (a join
for what a statement reads of a pending call's results, ``crossing_writes.touches``) says why it may at its use.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["any_meet", "meets", "under"]


def meets(first: str, second: str) -> bool:
    """The two paths may name the same memory: one is the other, or lies under it."""
    return first == second or under(first, second) or under(second, first)


def any_meet(paths: Iterable[str], others: Iterable[str]) -> bool:
    """Some path of ``paths`` meets some path of ``others``."""
    seen = frozenset(others)
    return any(meets(p, o) for p in paths for o in seen)


def under(path: str, whole: str) -> bool:
    """``path`` names a part of what ``whole`` names (``whole``: ``*``, or ``root.*`` or ``root``, standing for
    each of ``root``'s attributes and items); a path is not under itself."""
    root = whole[:-2] if whole.endswith(".*") else whole
    return whole == "*" != path or (path != whole and path.startswith((f"{root}.", f"{root}[")))
