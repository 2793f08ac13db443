"""Facts read from the run index alone, found once per index rather than once per module.

A run checks and lowers each of its modules against one index; a rule, or the planner's call search, that walked
every callee or every call of the run for each module did the same work once per module. :func:`per_index` keeps
the answer for the index it was last asked about, by identity: an index is never changed once built, and a run asks
about one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

__all__ = ["per_index"]

_I = TypeVar("_I")
_R = TypeVar("_R")


def per_index(fn: Callable[[_I], _R]) -> Callable[[_I], _R]:
    """``fn(index)``, computed again only when asked about another index than the last one."""
    last: list[tuple[_I, _R]] = []

    @functools.wraps(fn)
    def once(index: _I) -> _R:
        if not last or last[0][0] is not index:
            last[:] = [(index, fn(index))]
        return last[0][1]

    return once
