"""The code samples of README.md and docs/*.md, with what each one claims to be.

A fenced block may be preceded (on the line just above the fence) by an HTML comment that
says how it is tested; GitHub does not render it:

- ``<!-- sample: file NAME -->``: a Python file; later ``output of`` samples of the page read it as NAME.
- ``<!-- sample: output of COMMAND -->``: exactly what COMMAND prints (stdout, then stderr, one pipe).
- ``<!-- sample: excerpt of COMMAND -->`` (or ``of PATH``, a repository file): pieces of what COMMAND
  prints, each piece whole (lines in a row, indented alike); a line ``...`` separates pieces, so
  nothing is left out without saying so.
- ``<!-- sample: check -->``: a Python file whose ``# NPDnnn`` comments are exactly what ``npudsl check``
  reports on their lines.
- ``<!-- sample: skip REASON -->``: not run (the reason is required).

Without a comment: a ``python`` block must parse, an ``sh`` block's ``npudsl``/``make`` commands must be
accepted by the real parser and Makefile, and no block may show a diagnostic line, which would then
be output nobody compares.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

__all__ = ["DOCS", "REPO", "Sample", "all_samples", "samples_of"]

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^( *)```(\w*)\s*$")
_DIRECTIVE = re.compile(r"^\s*<!-- sample: (\w+)(?: (.*?))? -->\s*$")
KINDS = ("file", "output", "excerpt", "check", "skip", "plain")


@attrs.frozen
class Sample:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str  # the block's lines, without the fence's indentation
    kind: str  # one of KINDS
    argument: str = ""  # the file name, the command, or the reason

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _directive(previous: str) -> tuple[str, str]:
    found = _DIRECTIVE.match(previous)
    if found is None:
        return "plain", ""
    kind, argument = found[1], (found[2] or "").strip()
    if kind in ("output", "excerpt"):
        if not argument.startswith("of "):
            raise ValueError(f"<!-- sample: {kind} of COMMAND --> expected, got {previous.strip()!r}")
        argument = argument[3:]
    if kind not in KINDS or (kind in ("file", "output", "excerpt", "skip") and not argument):
        raise ValueError(f"unknown or incomplete sample comment {previous.strip()!r}")
    return kind, argument


def samples_of(page: Path) -> list[Sample]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, end = len(opening[1]), index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = "\n".join(line[indent:] for line in lines[index + 1 : end]) + "\n"
        kind, argument = _directive(lines[index - 1] if index else "")
        found.append(Sample(page, index + 1, opening[2], body, kind, argument))
        index = end + 1
    return found


def all_samples() -> list[Sample]:
    return [sample for page in DOCS for sample in samples_of(page)]
