"""Running a sample's command as a user would, and comparing an excerpt with the real output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from markdown_samples import REPO, Sample

__all__ = ["diagnostic_codes", "missing_piece", "run_command", "workdir_for"]

_LINKED = ("examples", "tests")  # commands name repository files as examples/..., tests/...


def workdir_for(samples: list[Sample], folder: Path) -> Path:
    """``folder`` holding the page's ``file`` samples, and links to the repository's example folders."""
    for sample in samples:
        if sample.kind == "file":
            (folder / sample.argument).write_text(sample.text, encoding="utf-8")
    for name in _LINKED:
        os.symlink(REPO / name, folder / name)
    return folder


def run_command(command: str, cwd: Path) -> str:
    """What ``command`` (``npudsl ...``) prints to one pipe, stdout and stderr together; a path: the file."""
    words = command.split()
    if len(words) == 1:
        return (cwd / command).read_text(encoding="utf-8")
    assert words[0] == "npudsl", f"samples run npudsl only: {command!r}"
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)}
    env.update(PYTHONPATH=str(REPO), NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-m", "npudsl", *words[1:]],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=300,
        check=False,
    )
    return done.stdout


def _squeeze(lines: list[str]) -> list[str]:
    """Runs of blank lines as one (a sample may drop the second blank line between top-level blocks)."""
    kept: list[str] = []
    for line in (line.rstrip() for line in lines):
        if line or (kept and kept[-1]):
            kept.append(line)
    return kept


def _pieces(excerpt: str) -> list[list[str]]:
    pieces: list[list[str]] = [[]]
    for line in excerpt.splitlines():
        if line.strip() == "...":
            pieces.append([])
        else:
            pieces[-1].append(line)
    return [_squeeze(piece) for piece in pieces if any(line.strip() for line in piece)]


def _at(piece: list[str], output: list[str], start: int) -> bool:
    first = output[start]
    pad = first[: len(first) - len(piece[0])] if first.endswith(piece[0]) else None
    if pad is None or pad.strip() or start + len(piece) > len(output):
        return False
    return all((pad + line if line else "") == output[start + i] for i, line in enumerate(piece))


def missing_piece(excerpt: str, output: str) -> str | None:
    """The first piece of ``excerpt`` not found whole (and after the previous one) in ``output``, else None."""
    lines, start = _squeeze(output.splitlines()), 0
    for piece in _pieces(excerpt):
        found = next((i for i in range(start, len(lines)) if _at(piece, lines, i)), None)
        if found is None:
            return "\n".join(piece)
        start = found + len(piece)
    return None


def diagnostic_codes(output: str, name: str) -> dict[int, set[str]]:
    """{line: codes} of the diagnostics ``npudsl check`` printed for the file ``name``."""
    found: dict[int, set[str]] = {}
    for line, code in re.findall(rf"^{re.escape(name)}:(\d+):\d+: (NPD\d{{3}}) ", output, re.MULTILINE):
        found.setdefault(int(line), set()).add(code)
    return found
