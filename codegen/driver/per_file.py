"""Each file of a run: whether it needs analysis, the task run on it in a worker, and its result.

Only the files that need analysis (``codegen.driver.triage``) go to a worker; the others keep their
text. A worker gets the files and the index with the fork and sends back an :class:`Outcome`: no source,
and no code when the file is unchanged, so little travels back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.driver.indexing import Progress
from codegen.driver.reading import SourceFile
from codegen.driver.triage import needs_analysis
from codegen.driver.workers import auto_jobs, parallel_map

if TYPE_CHECKING:
    from codegen.index.index import RunIndex

__all__ = ["FileResult", "Outcome", "map_files", "result_of", "untouched"]

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


@attrs.frozen
class Outcome:
    """What a worker sends back for one file: no source, and no code when the file is unchanged."""

    code: str | None = None  # None: unchanged (or not transformed: errors)
    diagnostics: tuple[Diagnostic, ...] = ()
    internal_error: str | None = None


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
    _report(progress, phase, range(1, skipped + 1), len(files))
    jobs = auto_jobs(sum(len(files[i].source or "") for i in wanted)) if jobs is None else jobs
    state = {"task": task, "files": files, "index": index}
    for done, (i, result) in enumerate(zip(wanted, parallel_map(_on_file, wanted, jobs=jobs, state=state)), 1):
        results[i] = result
        _report(progress, phase, [skipped + done], len(files))
    return results


def _report(progress: Progress | None, phase: str, done: Sequence[int] | range, total: int) -> None:
    if progress is not None:
        for count in done:
            progress(phase, count, total)


def _on_file(position: int, *, task: Callable[..., R], files: list[SourceFile], index: RunIndex) -> R:
    """In a worker: the files and the index came with the fork; only the position travels, and the result."""
    return task(files[position], index=index)


def result_of(file: SourceFile, outcome: Outcome | None) -> FileResult:
    if outcome is None:
        return untouched(file)
    failed = outcome.internal_error is not None or any(d.severity is Severity.ERROR for d in outcome.diagnostics)
    code = None if failed else outcome.code if outcome.code is not None else file.source
    return FileResult(file=file, code=code, diagnostics=outcome.diagnostics, internal_error=outcome.internal_error)
