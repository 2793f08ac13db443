"""A run over many files: read, index across files, transform in parallel, never raise per file.

Only the files that need analysis (``codegen.driver.triage``) are parsed, indexed or sent to a
worker; the others keep their text, at the cost of a read and a substring test. A run
where no file names npudsl builds no index and never imports libcst. Which files the index reads is
``indexing``; what is done with each file, and its result, ``per_file``.

``progress(phase, done, total)``, when given, is called as files are indexed
(phase ``"indexing"``) and transformed (``"transforming"``), so a front end can
show how far a long run is and estimate the time left.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from codegen.driver import pyast
from codegen.driver.discover import discover
from codegen.driver.indexing import Progress, index_run, run_index
from codegen.driver.per_file import FileResult, Outcome, map_files, result_of, untouched
from codegen.driver.reading import SourceFile, read_sources, source_of

if TYPE_CHECKING:
    from codegen.index.index import RunIndex

__all__ = [
    "FileResult",
    "Progress",
    "SourceFile",
    "discover",
    "heap_frozen",
    "index_run",
    "map_files",
    "read_sources",
    "run",
    "run_index",
    "source_of",
    "untouched",
]


def _transform_one(file: SourceFile, target: str, index: RunIndex) -> Outcome:
    from codegen.driver.api import transform_with_index

    assert file.source is not None
    try:
        code, diagnostics = transform_with_index(
            file.source, path=file.path, module_name=file.module, index=index, target=target
        )
    except Exception:  # per-file work never raises out of the run
        return Outcome(internal_error=traceback.format_exc())
    return Outcome(code=None if code == file.source else code, diagnostics=diagnostics)


def run(
    files: list[SourceFile], *, target: str, jobs: int | None = None, progress: Progress | None = None
) -> list[FileResult]:
    """Transform ``files`` as one run (see the module docstring); never raises for a file."""
    with pyast.shared_trees(), heap_frozen() as freeze:  # forked workers inherit the trees the index parsed
        index = run_index(files, progress)
        if index is not None:
            import codegen.driver.api  # noqa: F401  (imported once here, before workers fork, not in each of them)
        freeze()
        outcomes = map_files(
            functools.partial(_transform_one, target=target),
            files,
            index=index,
            jobs=jobs,
            phase="transforming",
            progress=progress,
        )
    return [result_of(file, outcome) for file, outcome in zip(files, outcomes)]


@contextlib.contextmanager
def heap_frozen() -> Iterator[Callable[[], None]]:
    """No collector passes while the index is built; from ``freeze()`` on, what is alive then (sources, trees,
    index) is kept out of the collector's passes while files transform.

    Parsing allocates many objects that live for the whole run, so the collector ran often while the
    index grew, and walked them again at each pass (a twentieth of a decorated run's time) to find little
    cyclic garbage (a few objects per file); each later pass would walk every tree of the run again.
    Skipped when the caller froze objects or turned the collector off itself.
    """
    if gc.get_freeze_count() or not gc.isenabled():
        yield lambda: None
        return
    frozen = False

    def freeze() -> None:
        nonlocal frozen
        gc.freeze()
        frozen = True
        gc.enable()

    gc.disable()
    try:
        yield freeze
    finally:
        gc.enable()
        if frozen:
            gc.unfreeze()
