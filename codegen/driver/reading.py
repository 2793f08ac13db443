"""Reading a run's files: each one whole, as UTF-8, with a positioned diagnostic instead of an exception.

A file that cannot be read (missing, not UTF-8, a FIFO or a device) still takes its
place in the run, with the diagnostic that says why, so the report of a run names
every file it was given.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.driver.modules import unique_keys
from npudsl import codes

__all__ = ["SourceFile", "read_source", "read_sources", "source_of"]


@attrs.frozen(kw_only=True)
class SourceFile:
    path: str  # as the user spelled it (joined with the walk)
    root: str  # the PATH argument it came from
    source: str | None
    module: str  # the module's key in the run, unique among its files (see codegen.driver.modules)
    error: Diagnostic | None = None


def read_sources(found: Iterable[tuple[str, str]]) -> list[SourceFile]:
    found = list(found)
    keys = unique_keys(path for path, _ in found)
    files = []
    for path, root in found:
        source, error = _read(path)
        module = keys[os.path.abspath(path)]
        files.append(SourceFile(path=path, root=root, source=source, module=module, error=error))
    return files


def read_source(path: str) -> str | None:
    """The text of one file read as the run's files are, or None where it cannot be read."""
    return _read(path)[0]


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
        return None, Diagnostic(
            path=path,
            line=line,
            col=col,
            code=codes.UNREADABLE,
            message="file is not valid UTF-8",
            hint="save the file as UTF-8 (PEP 3120)",
        )
    except OSError as exc:
        return None, Diagnostic(
            path=path,
            line=1,
            col=1,
            code=codes.UNREADABLE,
            message=f"cannot read file: {exc.strerror}",
            hint="check the path and its permissions",
        )


def _not_regular(path: str, mode: int) -> Diagnostic:
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device or other special file"
    return Diagnostic(
        path=path,
        line=1,
        col=1,
        code=codes.NOT_REGULAR,
        severity=Severity.WARNING,
        message=f"not a regular file ({kind}); skipped",
        hint="give npudsl regular .py files only",
    )


def source_of(text: str, *, path: str, module: str) -> SourceFile:
    """A source that is not read from a file (standard input)."""
    return SourceFile(path=path, root=path, source=text, module=module)
