"""``transform --diff``: unified diffs that ``git apply`` and ``patch -p1`` accept.

- Paths are relative to the current folder (``./src`` and an absolute path inside
  it both become ``src/...``), with ``/``, behind ``a/`` and ``b/``; a file outside
  the current folder keeps a ``../`` path (``git apply --unsafe-paths``).
- Lines split at ``\\n`` only (a form feed or ``\\r`` inside a line stays inside it),
  and a last line without a newline is followed by ``\\ No newline at end of file``.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator

__all__ = ["unified_diff"]

_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")
_NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    return _LINES.findall(text)


def diff_path(path: str) -> str:
    relative = os.path.relpath(os.path.abspath(path))
    return relative.replace(os.sep, "/")


def _terminated(lines: Iterator[str]) -> Iterator[str]:
    for line in lines:
        if line.endswith("\n"):
            yield line
        else:
            yield line + "\n"
            yield _NO_NEWLINE


def unified_diff(before: str, after: str, path: str) -> str:
    """The diff of one file, or ``""`` when nothing changed."""
    name = diff_path(path)
    lines = difflib.unified_diff(_lines(before), _lines(after), f"a/{name}", f"b/{name}")
    return "".join(_terminated(lines))
