"""``transform --check -o OUT``: is a committed tree of generated code up to date with its sources?

An annotated source always differs from its transform (the decorators become stream calls), so
``--check`` alone only fits a project that commits its sources already transformed (``--in-place``;
transforming that output again changes nothing). A project that keeps the annotated sources and
commits the generated code beside them (``transform src/ -o generated/``) asks another question:
would ``-o`` write anything different? This answers it without writing: each result is compared
with the file already at its destination, byte for byte.
"""

from __future__ import annotations

import attrs

from codegen.driver.run import FileResult

__all__ = ["Stale", "stale_outputs"]


@attrs.frozen
class Stale:
    destination: str
    reason: str  # "missing" or "out of date"


def stale_outputs(results: list[FileResult], destinations: dict[str, str]) -> list[Stale]:
    """The destinations whose content is not what ``-o`` would write now (files with errors are skipped)."""
    found = []
    for result in results:
        if result.has_errors or result.file.source is None:
            continue
        wanted = result.code if result.code is not None else result.file.source
        destination = destinations[result.file.path]
        current = _read(destination)
        if current != wanted:
            found.append(Stale(destination, "missing" if current is None else "out of date"))
    return found


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
