"""Small timing helpers shared by the benchmarks."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

__all__ = ["best_in_turns", "best_of"]


def best_of(fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """The fastest of ``repeat`` timings of ``fn()`` in seconds (garbage collected between runs).

    ``clock``: wall clock by default; ``time.process_time`` counts this process's CPU only, which
    other work on a shared machine disturbs far less (for single-process measurements).
    """
    best = float("inf")
    for _ in range(max(1, repeat)):
        gc.collect()
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def best_in_turns(measures: dict[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    """The smallest of ``repeat`` readings of each measure, the measures taking turns within each round
    (fair when the machine's load varies during the run)."""
    best = {name: float("inf") for name in measures}
    for _ in range(max(1, repeat)):
        for name, measure in measures.items():
            best[name] = min(best[name], measure())
    return best
