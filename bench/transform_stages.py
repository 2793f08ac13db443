"""Where the CPU time of a transform run goes, stage by stage, so a throughput figure says what costs it.

The stages are the calls ``codegen.driver.run.run`` and ``codegen.driver.api`` make, timed by
wrapping them for the duration of the measure (nothing else changes):

- index: the run index (``run_index``: the ``ast`` parse of every file it reads, the stream
  functions and their call sites);
- collect, validate, lower: the front half of each file's transform (``analyze``);
- rewrite: ``rewrite_source`` (the planned units rewritten on their text, libcst for the others);
- other: the rest of the run (triage, workers, results).
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import codegen.driver.api as api
import codegen.driver.run as driver

__all__ = ["STAGES", "stage_seconds"]

STAGES = ("index", "collect", "validate", "lower", "rewrite", "other")
_WRAPPED = ((driver, "run_index", "index"), (api, "collect", "collect"), (api, "validate", "validate"))
_WRAPPED += ((api, "lower", "lower"), (api, "rewrite_source", "rewrite"))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timing(function: Callable[..., Any], stage: str, spent: dict[str, float]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = _cpu()
        try:
            return function(*args, **kwargs)
        finally:
            spent[stage] += _cpu() - start

    return timed


@contextlib.contextmanager
def _stages_timed(spent: dict[str, float]) -> Iterator[None]:
    originals: list[tuple[ModuleType, str, Any]] = [
        (module, name, getattr(module, name)) for module, name, _ in _WRAPPED
    ]
    for (module, name, stage), (_, _, function) in zip(_WRAPPED, originals):
        setattr(module, name, _timing(function, stage, spent))
    try:
        yield
    finally:
        for module, name, function in originals:
            setattr(module, name, function)


def stage_seconds(transform: Callable[[], object], repeat: int) -> dict[str, float]:
    """CPU seconds of each stage of ``transform()`` (one run on one process: ``jobs=1``), from the fastest
    of ``repeat`` runs."""
    best: dict[str, float] | None = None
    for _ in range(max(1, repeat)):
        spent = dict.fromkeys(STAGES, 0.0)
        start = _cpu()
        with _stages_timed(spent):
            transform()
        spent["other"] = _cpu() - start - sum(spent.values())
        if best is None or sum(spent.values()) < sum(best.values()):
            best = spent
    assert best is not None
    return best
