"""Run the user's code (their file's import, model constructor, inputs function) so that a failure in it is one
positioned line, ``path:line:col: message``, with a hint, never a traceback.

The position is the innermost frame of the user's file (else the innermost frame
outside npudsl itself); a syntax error gives its own.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from typing import TypeVar

from npudsl.errors import NpudslError

__all__ = ["position", "run_user"]

_T = TypeVar("_T")
_NPUDSL = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def position(path: str, line: int, column: int | None = None) -> str:
    """``path:line:col`` (1-based; the column is 1 when unknown)."""
    return f"{path}:{line}:{column or 1}"


def _where(exc: BaseException, path: str) -> str:
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return position(exc.filename, exc.lineno, exc.offset)
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(path)]
    theirs = [f for f in frames if not os.path.abspath(f.filename).startswith(_NPUDSL)]
    chosen = mine or theirs or frames
    frame = chosen[-1] if chosen else None
    if frame is None or frame.lineno is None:
        return position(path, 1)
    column = getattr(frame, "colno", None)
    return position(frame.filename, frame.lineno, None if column is None else column + 1)


def run_user(path: str, what: str, hint: str, call: Callable[[], _T]) -> _T:
    """``call()``; an exception it raises (npudsl's own aside) becomes an :class:`NpudslError` of one line:
    where it happened, ``what`` failed and why, and ``hint``."""
    try:
        return call()
    except NpudslError:
        raise
    except Exception as exc:  # noqa: BLE001 - anything the user's code raises is reported, not re-raised
        text = (exc.msg if isinstance(exc, SyntaxError) else str(exc)).strip()
        reason = text.splitlines()[0] if text else ""
        raise NpudslError(
            f"{_where(exc, path)}: {what} failed: {type(exc).__name__}{': ' + reason if reason else ''}; {hint}"
        ) from None
