"""Per-file work on a pool of worker processes that never outlive the run.

- Workers ignore SIGINT: Ctrl-C reaches the whole process group, and only the
  parent decides what an interrupt means (it terminates the pool and exits 130).
- Workers die with their parent, even when the parent is killed with SIGKILL:
  on Linux the kernel sends them SIGKILL (``PR_SET_PDEATHSIG``); elsewhere a
  watchdog thread exits the worker once its parent is gone.
- Results come back in the order of the items.
- How many workers a run is worth (:func:`auto_jobs`) follows from the work, not the
  machine alone: a worker costs a fork and the pickling of its results, so on a small
  tree one process is fastest, and on a tree of plain files (no work at all) too.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

__all__ = ["WORK_PER_WORKER", "auto_jobs", "parallel_map"]

T = TypeVar("T")
R = TypeVar("R")

_PR_SET_PDEATHSIG = 1
WORK_PER_WORKER = 256_000  # characters of source to analyze that repay one more worker (bench/transform_throughput.py)
_STATE: dict[str, Any] = {}


def _die_with(parent: int) -> None:
    """Make this process end when ``parent`` does."""
    libc_name = ctypes.util.find_library("c") if sys.platform.startswith("linux") else None
    if libc_name:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0 and os.getppid() == parent:
            return
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _init_worker(parent: int, state: dict[str, Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pool ends its workers with SIGTERM
    _die_with(parent)
    _STATE.update(state)


def _call(task: Callable[..., R], item: Any) -> R:
    return task(item, **_STATE)


def _context() -> Any:
    """fork on Linux: workers start at once and share the trees the index parsed; the default elsewhere."""
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)


def _cpus() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def auto_jobs(work: int) -> int:
    """Workers for ``work`` characters of source to analyze: one per :data:`WORK_PER_WORKER`, one per CPU at most."""
    return max(1, min(_cpus(), work // WORK_PER_WORKER))


def parallel_map(
    task: Callable[..., R],
    items: Sequence[T],
    *,
    jobs: int,
    state: dict[str, Any],
) -> Iterator[R]:
    """``task(item, **state)`` for every item, on ``jobs`` processes (here when there is too little work)."""
    if jobs <= 1 or len(items) < 2 * jobs:
        yield from (task(item, **state) for item in items)
        return
    chunk = max(1, len(items) // (jobs * 8))
    with _context().Pool(jobs, initializer=_init_worker, initargs=(os.getpid(), state)) as pool:
        yield from pool.imap(functools.partial(_call, task), items, chunksize=chunk)
