"""Find the ``file:line`` of a ``# P:<name>`` / ``# C:<name>`` marker comment in a test model file."""

from __future__ import annotations

import os

__all__ = ["marked_line"]


def marked_line(module_file: str, marker: str) -> str:
    path = os.path.abspath(module_file)
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.rstrip().endswith(f"# {marker}"):
                return f"{path}:{number}"
    raise AssertionError(f"no marker {marker!r} in {path}")
