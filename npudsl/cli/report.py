"""Diagnostics as people and CI systems read them, and the one-line summary of a run.

- ``text``: ``path:line:col: NPDnnn error: message (hint: ...)`` (``warning:`` for
  warnings), coloured on a terminal.
- ``json``: one object per line (``Diagnostic.to_json``).
- ``github``: workflow commands, ``::error file=...,line=...,col=...,title=NPDnnn::message``,
  which GitHub Actions shows as annotations on the pull request.
- ``sarif``: see :mod:`npudsl.cli.sarif` (one document for the whole run).
"""

from __future__ import annotations

import json
import os

from codegen.check.diagnostics import Diagnostic, Severity
from npudsl.cli.terminal import Style

__all__ = ["count", "portable_path", "render_github", "render_json", "render_text", "shown_path"]


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 file``, ``2 files``, ``0 warnings``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def portable_path(path: str) -> str:
    """``path`` relative to the current folder when it is inside it, with ``/``; else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    chosen = absolute if relative == ".." or relative.startswith(".." + os.sep) else relative
    return chosen.replace(os.sep, "/")


def shown_path(path: str) -> str:
    """A path as the user gave it, written one way: ``./src/./m.py`` is ``src/m.py``; absolute stays absolute."""
    return path if path == "-" else os.path.normpath(path)


def render_text(diagnostic: Diagnostic, style: Style = Style()) -> str:
    error = diagnostic.severity is Severity.ERROR
    severity = style("error:" if error else "warning:", "red" if error else "yellow", "bold")
    hint = f" {style('(hint: ' + diagnostic.hint + ')', 'dim')}" if diagnostic.hint else ""
    where = style(f"{shown_path(diagnostic.path)}:{diagnostic.line}:{diagnostic.col}:", "bold")
    return f"{where} {style(diagnostic.code, 'cyan')} {severity} {diagnostic.message}{hint}"


def render_json(diagnostic: Diagnostic) -> str:
    return json.dumps({**diagnostic.to_json(), "path": shown_path(diagnostic.path)}, sort_keys=True)


def _escape(text: str, *, attribute: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if attribute else text


def render_github(diagnostic: Diagnostic) -> str:
    kind = "error" if diagnostic.severity is Severity.ERROR else "warning"
    where = (
        f"file={_escape(portable_path(diagnostic.path), attribute=True)},line={diagnostic.line},"
        f"col={diagnostic.col},title={diagnostic.code}"
    )
    hint = f" (hint: {diagnostic.hint})" if diagnostic.hint else ""
    return f"::{kind} {where}::{_escape(diagnostic.code + ' ' + diagnostic.message + hint)}"
