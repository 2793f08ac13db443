"""Which diagnostics are reported: ``# noqa`` comments, ``--select`` and ``--ignore``.

- ``# noqa: NPD505`` (several: ``# noqa: NPD505, NPD506``) on a diagnostic's line
  silences those codes there; a bare ``# noqa`` silences every code there. Only
  real comments count (not text inside a string); ``# noqa: E501`` names no
  npudsl code and silences nothing of ours.
- ``select`` keeps only the codes that start with one of its prefixes (all when
  empty); ``ignore`` drops the codes that start with one of its prefixes.
- Errors are never silenced: a file with an error is not transformed, so the
  reason is always shown. These rules apply to warnings.
- A file is tokenized for its comments only when it has a warning to silence:
  the files of a run without one (nearly all) cost nothing here.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Sequence

import attrs

from codegen.check.diagnostics import Diagnostic, Severity

__all__ = ["Rules", "noqa_lines"]

_NOQA = re.compile(r"#\s*noqa(?:\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:(?:\s*,\s*|\s+)[A-Z]+[0-9]+)*))?", re.IGNORECASE)

Silenced = frozenset[str] | None  # None: every code


def _comments(source: str) -> Iterable[tuple[int, str]]:
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                yield token.start[0], token.string
    except (tokenize.TokenError, SyntaxError):  # a file that does not tokenize: read the lines as they are
        yield from ((n, line[line.index("#") :]) for n, line in enumerate(source.splitlines(), 1) if "#" in line)


def noqa_lines(source: str) -> dict[int, Silenced]:
    """Line -> the codes its ``# noqa`` silences (None: all)."""
    found: dict[int, Silenced] = {}
    for line, comment in _comments(source):
        match = _NOQA.search(comment)
        if match:
            codes = match.group("codes")
            found[line] = frozenset(c.upper() for c in re.split(r"[\s,]+", codes)) if codes else None
    return found


@attrs.frozen(kw_only=True)
class Rules:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def _wanted(self, code: str) -> bool:
        selected = not self.select or code.startswith(self.select)
        return selected and not code.startswith(self.ignore or ("\0",))

    def keep(self, diagnostics: Sequence[Diagnostic], source: str | None) -> tuple[tuple[Diagnostic, ...], int]:
        """(the diagnostics to report, how many were silenced)."""
        if all(d.severity is Severity.ERROR for d in diagnostics):  # nothing to silence: never tokenize
            return tuple(diagnostics), 0
        marks = noqa_lines(source) if source and "noqa" in source.lower() else {}
        kept = tuple(d for d in diagnostics if d.severity is Severity.ERROR or self._shown(d, marks))
        return kept, len(diagnostics) - len(kept)

    def _shown(self, diagnostic: Diagnostic, marks: dict[int, Silenced]) -> bool:
        if not self._wanted(diagnostic.code):
            return False
        if diagnostic.line not in marks:
            return True
        silenced = marks[diagnostic.line]
        return silenced is not None and diagnostic.code not in silenced
