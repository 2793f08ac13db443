"""A run over many files: discover, index across files, transform in parallel, never raise per file."""

from __future__ import annotations

import contextlib
import gc
import os
import re
import sys
import traceback
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor

import attrs

from codegen import pyast
from codegen.api import mentions_npudsl, transform_with_index
from codegen.diagnostics import Diagnostic, Severity
from codegen.index import RunIndex, build_index
from codegen.modules import module_id, unique_keys

__all__ = ["FileResult", "SourceFile", "discover", "read_sources", "run"]

_SKIP_DIRS = re.compile(r"^(\..*|__pycache__|node_modules|.*\.egg-info)$")


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


def discover(paths: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(file, root) for every ``.py`` file under ``paths``, in a stable order."""
    for root in paths:
        if os.path.isfile(root):
            yield root, root
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not _SKIP_DIRS.match(d))
            yield from ((os.path.join(folder, f), root) for f in sorted(files) if f.endswith(".py"))


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
        with open(path, "rb") as handle:
            data = handle.read()
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, Diagnostic(path=path, line=line, col=col, code="NPD002", message="file is not valid UTF-8",
                                hint="save the file as UTF-8 (PEP 3120)")
    except OSError as exc:
        return None, Diagnostic(path=path, line=1, col=1, code="NPD002", message=f"cannot read file: {exc.strerror}",
                                hint="check the path and its permissions")


def index_run(files: list[SourceFile]) -> RunIndex:
    """Index decorated files, then the files that name one of their classes or functions (their call sites)."""
    decorated = [(module_id(f.path, f.module), f.source) for f in files
                 if f.source is not None and mentions_npudsl(f.source)]
    first = build_index(decorated)
    defined = {key.split(":", 1)[1].split(".", 1)[0] for key in first.callees}
    if not defined:
        return first
    names = re.compile(r"\b(" + "|".join(map(re.escape, sorted(defined))) + r")\b")
    callers = [(module_id(f.path, f.module), f.source) for f in files
               if f.source is not None and not mentions_npudsl(f.source) and names.search(f.source)]
    return build_index(decorated + callers) if callers else first


_WORKER_INDEX: RunIndex | None = None


def _init_worker(index: RunIndex) -> None:
    global _WORKER_INDEX
    _WORKER_INDEX = index


def _transform_one(file: SourceFile, target: str) -> FileResult:
    if file.error is not None:
        return FileResult(file=file, code=None, diagnostics=(file.error,))
    assert file.source is not None and _WORKER_INDEX is not None
    try:
        code, diagnostics = transform_with_index(file.source, path=file.path, module_name=file.module,
                                                 index=_WORKER_INDEX, target=target)
    except Exception:  # per-file work never raises out of the run
        return FileResult(file=file, code=None, internal_error=traceback.format_exc())
    errors = any(d.severity is Severity.ERROR for d in diagnostics)
    return FileResult(file=file, code=None if errors else code, diagnostics=diagnostics)


def run(files: list[SourceFile], *, target: str, jobs: int, progress: bool = False) -> list[FileResult]:
    with pyast.shared_trees():  # forked workers inherit the trees the index parsed
        return _run(files, target=target, jobs=jobs, progress=progress)


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


def _run(files: list[SourceFile], *, target: str, jobs: int, progress: bool) -> list[FileResult]:
    index = index_run(files)
    with _heap_frozen():
        return _transform_all(files, index, target=target, jobs=jobs, progress=progress)


def _transform_all(files: list[SourceFile], index: RunIndex, *, target: str, jobs: int,
                   progress: bool) -> list[FileResult]:
    if jobs <= 1 or len(files) < 2 * jobs:
        _init_worker(index)
        return [_report(i, len(files), progress, _transform_one(f, target)) for i, f in enumerate(files, 1)]
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(index,)) as pool:
        results = pool.map(_transform_one, files, [target] * len(files), chunksize=max(1, len(files) // (jobs * 8)))
        return [_report(i, len(files), progress, r) for i, r in enumerate(results, 1)]


def _report(done: int, total: int, progress: bool, result: FileResult) -> FileResult:
    if progress:
        end = "\n" if done == total else ""
        print(f"\r[{done}/{total}] {result.file.path[-60:]:<60}", end=end, file=sys.stderr, flush=True)
    return result
