"""Facts read from the run index alone, found once per index (or once per run) rather than once per module.

A run checks and lowers each of its modules against one index; a rule, or the planner's call search, that walked
every callee or every call of the run for each module did the same work once per module. :func:`per_index` keeps
the answer for the index it was last asked about, by identity: an index is never changed once built, and a run asks
about one.

A run has two indexes, though: the index build searches its modules' calls against a partial one (every stream
function settled, no calls yet), and the lowering reads the final one, the same with its calls added
(``codegen/index/index.py``). An answer that reads none of the calls is the same of both: :func:`per_run` keeps it
for the run (``RunIndex.run``, which the final index takes over from the partial one), so the facts the call search
read of each module (what its functions write, the state its calls read) are not read again by the lowering.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

__all__ = ["per_index", "per_run"]

_I = TypeVar("_I")
_R = TypeVar("_R")


def per_index(fn: Callable[[_I], _R]) -> Callable[[_I], _R]:
    """``fn(index)``, computed again only when asked about another index than the last one."""
    return _kept(fn, lambda index: index)


def per_run(fn: Callable[[_I], _R]) -> Callable[[_I], _R]:
    """``fn(index)``, computed again only when asked about another run than the last one: ``fn`` must not read the
    index's calls (``calls``, ``stream_calls``), which only the final index of a run holds."""
    return _kept(fn, lambda index: getattr(index, "run", index))


def _kept(fn: Callable[[_I], _R], key: Callable[[_I], object]) -> Callable[[_I], _R]:
    last: list[tuple[object, _R]] = []

    @functools.wraps(fn)
    def once(index: _I) -> _R:
        run = key(index)
        if not last or last[0][0] is not run:
            last[:] = [(run, fn(index))]
        return last[0][1]

    return once
