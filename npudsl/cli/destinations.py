"""Where ``npudsl transform`` writes: one destination per input, checked before anything is written.

Two inputs that would land on one file, an ``-o`` that is a file, or a folder we
may not write are usage errors raised before the first write, so a run either
writes every result or none; each write itself is atomic (``files.write_atomic``).
"""

from __future__ import annotations

import os

from codegen.driver.run import FileResult, SourceFile
from npudsl.cli.args import UsageError
from npudsl.cli.files import output_path, write_atomic

__all__ = ["plan_outputs", "write_all"]


def plan_outputs(files: list[SourceFile], out: str, *, writing: bool = True) -> dict[str, str]:
    """path -> destination under ``out``; a :class:`UsageError` when two inputs would land on one file."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"-o {out}: exists and is not a folder")
    destinations: dict[str, str] = {}
    taken: dict[str, str] = {}
    for file in files:
        destination = destinations[file.path] = output_path(file.path, file.root, out)
        other = taken.setdefault(os.path.abspath(destination), file.path)
        if other != file.path:
            raise UsageError(
                f"-o {out}: {other} and {file.path} would both be written to {destination}; nothing was written"
            )
    if writing:
        _check_writable(out)
    return destinations


def _check_writable(out: str) -> None:
    folder = os.path.abspath(out)
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"-o {out}: cannot write in {folder} (permission denied)")


def write_all(results: list[FileResult], destinations: dict[str, str]) -> None:
    """Changed files durably (flushed to the disk before the rename); a copy of an unchanged one without waiting."""
    for result in results:
        text = result.code if result.code is not None else result.file.source or ""
        destination = destinations[result.file.path]
        try:
            write_atomic(destination, text, durable=result.changed)
        except OSError as exc:
            raise UsageError(f"cannot write {destination}: {exc.strerror or exc}") from None
