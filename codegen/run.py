"""A run over many files: read, index across files, transform in parallel, never raise per file.

``progress(phase, done, total)``, when given, is called as files are indexed
(phase ``"indexing"``) and transformed (``"transforming"``), so a front end can
show how far a long run is and estimate the time left.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import re
import stat
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

import attrs

from codegen import pyast
from codegen.api import mentions_npudsl, transform_with_index
from codegen.diagnostics import Diagnostic, Severity
from codegen.discover import discover
from codegen.index import RunIndex, build_index
from codegen.modules import module_id, unique_keys
from codegen.workers import parallel_map
from npudsl import codes

__all__ = ["FileResult", "Progress", "SourceFile", "discover", "index_run", "map_files", "read_sources", "run",
           "source_of"]

Progress = Callable[[str, int, int], None]
R = TypeVar("R")


@attrs.frozen(kw_only=True)
class SourceFile:
    path: str  # as the user spelled it (joined with the walk)
    root: str  # the PATH argument it came from
    source: str | None
    module: str  # the module's key in the run, unique among its files (see codegen.modules)
    error: Diagnostic | None = None


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


def read_sources(found: Iterable[tuple[str, str]]) -> list[SourceFile]:
    found = list(found)
    keys = unique_keys(path for path, _ in found)
    files = []
    for path, root in found:
        source, error = _read(path)
        module = keys[os.path.abspath(path)]
        files.append(SourceFile(path=path, root=root, source=source, module=module, error=error))
    return files


def _read(path: str) -> tuple[str | None, Diagnostic | None]:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the run
        with os.fdopen(fd, "rb") as handle:
            kind = os.fstat(fd).st_mode
            if not stat.S_ISREG(kind):
                return None, _not_regular(path, kind)
            data = handle.read()
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, Diagnostic(path=path, line=line, col=col, code=codes.UNREADABLE, message="file is not valid UTF-8",
                                hint="save the file as UTF-8 (PEP 3120)")
    except OSError as exc:
        return None, Diagnostic(path=path, line=1, col=1, code=codes.UNREADABLE,
                                message=f"cannot read file: {exc.strerror}",
                                hint="check the path and its permissions")


def _not_regular(path: str, mode: int) -> Diagnostic:
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device or other special file"
    return Diagnostic(path=path, line=1, col=1, code=codes.NOT_REGULAR, severity=Severity.WARNING,
                      message=f"not a regular file ({kind}); skipped", hint="give npudsl regular .py files only")


def source_of(text: str, *, path: str, module: str) -> SourceFile:
    """A source that is not read from a file (standard input)."""
    return SourceFile(path=path, root=path, source=text, module=module)


def _parse_ahead(sources: Sequence[tuple[object, str]], phase: str, progress: Progress | None) -> None:
    """Parse now what the index will parse, so a long indexing phase shows progress (trees are shared)."""
    if progress is None:
        return
    for done, (_, source) in enumerate(sources, 1):
        with contextlib.suppress(SyntaxError, ValueError):
            pyast.parse(source)
        progress(phase, done, len(sources))


def index_run(files: list[SourceFile], progress: Progress | None = None) -> RunIndex:
    """Index decorated files, then the files that name one of their classes or functions (their call sites)."""
    decorated = [(module_id(f.path, f.module), f.source) for f in files
                 if f.source is not None and mentions_npudsl(f.source)]
    _parse_ahead(decorated, "indexing", progress)
    first = build_index(decorated)
    defined = {key.split(":", 1)[1].split(".", 1)[0] for key in first.callees}
    if not defined:
        return first
    names = re.compile(r"\b(" + "|".join(map(re.escape, sorted(defined))) + r")\b")
    callers = [(module_id(f.path, f.module), f.source) for f in files
               if f.source is not None and not mentions_npudsl(f.source) and names.search(f.source)]
    _parse_ahead(callers, "indexing call sites", progress)
    return build_index(decorated + callers) if callers else first


def map_files(task: Callable[..., R], files: list[SourceFile], *, index: RunIndex, jobs: int, phase: str,
              progress: Progress | None = None) -> list[R]:
    """``task(file, index=index)`` for every file, on ``jobs`` worker processes, in the files' order."""
    results = []
    for done, result in enumerate(parallel_map(task, files, jobs=jobs, state={"index": index}), 1):
        results.append(result)
        if progress is not None:
            progress(phase, done, len(files))
    return results


def _transform_one(file: SourceFile, target: str, index: RunIndex) -> FileResult:
    if file.error is not None or file.source is None:
        return FileResult(file=file, code=None, diagnostics=tuple(d for d in (file.error,) if d is not None))
    try:
        code, diagnostics = transform_with_index(file.source, path=file.path, module_name=file.module,
                                                 index=index, target=target)
    except Exception:  # per-file work never raises out of the run
        return FileResult(file=file, code=None, internal_error=traceback.format_exc())
    errors = any(d.severity is Severity.ERROR for d in diagnostics)
    return FileResult(file=file, code=None if errors else code, diagnostics=diagnostics)


def run(files: list[SourceFile], *, target: str, jobs: int, progress: Progress | None = None) -> list[FileResult]:
    """Transform ``files`` as one run (see the module docstring); never raises for a file."""
    with pyast.shared_trees():  # forked workers inherit the trees the index parsed
        index = index_run(files, progress)
        with _heap_frozen():
            return map_files(functools.partial(_transform_one, target=target), files, index=index, jobs=jobs,
                             phase="transforming", progress=progress)


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
