"""A run over many files: read, index across files, transform in parallel, never raise per file.

Only the files that need analysis (``codegen.driver.triage``) are parsed, indexed or sent to a
worker; the others keep their text, at the cost of a read and a substring test. A run
where no file names npudsl builds no index and never imports libcst.

``progress(phase, done, total)``, when given, is called as files are indexed
(phase ``"indexing"``) and transformed (``"transforming"``), so a front end can
show how far a long run is and estimate the time left.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import re
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.driver import pyast
from codegen.driver.discover import discover
from codegen.driver.modules import ModuleId, module_id
from codegen.driver.pyast import mentions_npudsl
from codegen.driver.reading import SourceFile, read_sources, source_of
from codegen.driver.triage import needs_analysis
from codegen.driver.workers import auto_jobs, parallel_map

if TYPE_CHECKING:
    from codegen.index.index import RunIndex

__all__ = [
    "FileResult",
    "Progress",
    "SourceFile",
    "discover",
    "index_run",
    "map_files",
    "read_sources",
    "run",
    "run_index",
    "source_of",
    "untouched",
]

Progress = Callable[[str, int, int], None]
R = TypeVar("R")


@attrs.frozen(kw_only=True)
class FileResult:
    file: SourceFile
    code: str | None  # None: not transformed (error, or nothing to do)
    diagnostics: tuple[Diagnostic, ...] = ()
    internal_error: str | None = None

    @property
    def changed(self) -> bool:
        return self.code is not None and self.code != self.file.source

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics) or self.internal_error is not None


def _parse_ahead(sources: Sequence[tuple[object, str]], phase: str, progress: Progress | None) -> None:
    """Parse now what the index will parse, so a long indexing phase shows progress (trees are shared)."""
    if progress is None:
        return
    for done, (_, source) in enumerate(sources, 1):
        with contextlib.suppress(SyntaxError, ValueError):
            pyast.parse(source)
        progress(phase, done, len(sources))


def index_run(files: list[SourceFile], progress: Progress | None = None) -> RunIndex:
    """Index decorated files, then the files that name one of their classes or functions (their call sites),
    then the modules they call a function of by relative import (what it returns)."""
    from codegen.index.index import build_index  # libcst comes with it: only runs with a decorated file pay for it

    decorated = [
        (module_id(f.path, f.module), f.source) for f in files if f.source is not None and mentions_npudsl(f.source)
    ]
    _parse_ahead(decorated, "indexing", progress)

    def callers(defined: frozenset[str]) -> list[tuple[ModuleId, str]]:
        names = re.compile(r"\b(" + "|".join(map(re.escape, sorted(defined))) + r")\b")
        found = [
            (module_id(f.path, f.module), f.source)
            for f in files
            if f.source is not None and not mentions_npudsl(f.source) and names.search(f.source)
        ]
        _parse_ahead(found, "indexing call sites", progress)
        return found

    def modules(dotted: frozenset[str]) -> list[tuple[ModuleId, str]]:
        found = [(module_id(f.path, f.module), f.source) for f in files if f.module.rpartition("/")[2] in dotted]
        _parse_ahead([(m, s) for m, s in found if s is not None], "indexing imported modules", progress)
        return [(m, s) for m, s in found if s is not None]

    return build_index(decorated, callers, modules)


def run_index(files: list[SourceFile], progress: Progress | None = None) -> RunIndex | None:
    """:func:`index_run`, or None when no file names npudsl (then no file has anything to do)."""
    if not any(f.source is not None and mentions_npudsl(f.source) for f in files):
        return None
    return index_run(files, progress)


def untouched(file: SourceFile) -> FileResult:
    """The result of a file that needs no analysis: its source as it is, and the error that kept it unread."""
    return FileResult(file=file, code=file.source, diagnostics=tuple(d for d in (file.error,) if d is not None))


def map_files(
    task: Callable[..., R],
    files: list[SourceFile],
    *,
    index: RunIndex | None,
    jobs: int | None,
    phase: str,
    progress: Progress | None = None,
) -> list[R | None]:
    """``task(file, index=index)`` for every file that needs analysis (None for the others), in the files' order,
    on ``jobs`` worker processes (None: as many as the work is worth, see ``codegen.driver.workers.auto_jobs``)."""
    wanted = [i for i, f in enumerate(files) if f.source is not None and needs_analysis(f.source, f.module, index)]
    results: list[R | None] = [None] * len(files)
    skipped = len(files) - len(wanted)
    if progress is not None:
        for done in range(1, skipped + 1):
            progress(phase, done, len(files))
    jobs = auto_jobs(sum(len(files[i].source or "") for i in wanted)) if jobs is None else jobs
    state = {"task": task, "files": files, "index": index}
    for done, (i, result) in enumerate(zip(wanted, parallel_map(_on_file, wanted, jobs=jobs, state=state)), 1):
        results[i] = result
        if progress is not None:
            progress(phase, skipped + done, len(files))
    return results


def _on_file(position: int, *, task: Callable[..., R], files: list[SourceFile], index: RunIndex) -> R:
    """In a worker: the files and the index came with the fork; only the position travels, and the result."""
    return task(files[position], index=index)


@attrs.frozen
class Outcome:
    """What a worker sends back for one file: no source, and no code when the file is unchanged."""

    code: str | None = None  # None: unchanged (or not transformed: errors)
    diagnostics: tuple[Diagnostic, ...] = ()
    internal_error: str | None = None


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


def _result(file: SourceFile, outcome: Outcome | None) -> FileResult:
    if outcome is None:
        return untouched(file)
    failed = outcome.internal_error is not None or any(d.severity is Severity.ERROR for d in outcome.diagnostics)
    code = None if failed else outcome.code if outcome.code is not None else file.source
    return FileResult(file=file, code=code, diagnostics=outcome.diagnostics, internal_error=outcome.internal_error)


def run(
    files: list[SourceFile], *, target: str, jobs: int | None = None, progress: Progress | None = None
) -> list[FileResult]:
    """Transform ``files`` as one run (see the module docstring); never raises for a file."""
    with pyast.shared_trees():  # forked workers inherit the trees the index parsed
        index = run_index(files, progress)
        if index is not None:
            import codegen.driver.api  # noqa: F401  (imported once here, before workers fork, not in each of them)
        with _heap_frozen():
            outcomes = map_files(
                functools.partial(_transform_one, target=target),
                files,
                index=index,
                jobs=jobs,
                phase="transforming",
                progress=progress,
            )
    return [_result(file, outcome) for file, outcome in zip(files, outcomes)]


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Keep what is alive now (sources, trees, index) out of the collector's passes while files transform.

    Parsing allocates many objects, so the collector runs often; each full pass would walk
    every tree of the run again. Skipped when the caller froze objects itself.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
