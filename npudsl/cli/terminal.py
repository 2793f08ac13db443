"""What a person at a terminal sees: colour (only on a terminal, never with ``NO_COLOR``) and progress.

Progress is one line on standard error, redrawn in place, shown only on a terminal
and only once a run has taken longer than a moment; it estimates the time left
from the pace of the current phase (indexing, transforming, checking).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

import attrs

__all__ = ["ProgressLine", "Style", "wants_color"]

_CODES = {"red": "31", "yellow": "33", "bold": "1", "dim": "2", "cyan": "36"}


def wants_color(stream: TextIO) -> bool:
    """Colour for ``stream``: a terminal, ``NO_COLOR`` unset or empty, ``TERM`` not ``dumb``."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@attrs.frozen
class Style:
    color: bool = False

    def __call__(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        return f"\033[{';'.join(_CODES[s] for s in styles)}m{text}\033[0m"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    return f"{int(seconds // 60)} min {round(seconds % 60):02d} s"


@attrs.define
class ProgressLine:
    """``progress(phase, done, total)`` for :func:`codegen.driver.run.run`; call :meth:`close` at the end."""

    stream: TextIO = sys.stderr
    delay: float = 0.5  # seconds before the first line: short runs print nothing
    clock: Callable[[], float] = time.monotonic
    started: float = attrs.field(init=False)
    phase: tuple[str, float, int] = attrs.field(init=False, default=("", 0.0, 0))  # name, since, done then
    shown: bool = False
    last: float = 0.0
    width: int = 0  # of the line shown: a shorter one is padded over it (no escape codes, NO_COLOR or not)

    def __attrs_post_init__(self) -> None:
        self.started = self.clock()

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = self.clock()
        if phase != self.phase[0]:
            self.phase = (phase, now, done)
        if now - self.started < self.delay or (now - self.last < 0.1 and done < total):
            return
        self.last, self.shown = now, True
        text = self.text(done, total, now)
        self.stream.write(f"\r{text.ljust(self.width)}")
        self.width = len(text)
        self.stream.flush()

    def text(self, done: int, total: int, now: float) -> str:
        phase, since, first = self.phase
        paced = done > first and now > since
        left = (now - since) / (done - first) * (total - done) if paced else 0.0
        eta = f", about {_duration(left)} left" if paced and done < total else ""
        return f"npudsl: {phase} {done}/{total} files{eta}"

    def close(self) -> None:
        if self.shown:
            self.stream.write(f"\r{' ' * self.width}\r")
            self.stream.flush()
