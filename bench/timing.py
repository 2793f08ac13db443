"""Small timing helpers shared by the benchmarks."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

__all__ = ["best_of"]


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` wall-clock timings of ``fn()`` in seconds (garbage collected between runs)."""
    best = float("inf")
    for _ in range(max(1, repeat)):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
