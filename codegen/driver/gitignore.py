"""The ``.gitignore`` rules that decide which files a directory walk skips.

Patterns follow git's rules for the common cases: ``#`` comments, ``!`` to
re-include, a trailing ``/`` for folders only, a ``/`` at the start or in the
middle anchors the pattern to the folder of its ``.gitignore``, ``*``/``?``/
``[...]`` never match ``/``, and ``**`` matches across folders. The last
matching pattern wins. Files of an ignored folder are never looked at, as in git.
"""

from __future__ import annotations

import os
import re

import attrs

__all__ = ["IgnoreRules", "git_root", "load_rules"]


@attrs.frozen(kw_only=True)
class _Pattern:
    base: str  # the folder of the .gitignore, absolute
    regex: re.Pattern[str]
    negated: bool
    folders_only: bool


def _translate(glob: str) -> str:
    """A gitignore glob (without its anchoring ``/``) as a regular expression over a relative path."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) != -1:
            inner = glob[i + 1 : end]
            out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(_one(glob[i]))
            i += 1
    return "".join(out)


def _one(char: str) -> str:
    return {"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char))


def _parse(line: str, base: str) -> _Pattern | None:
    line = line.rstrip("\n").rstrip(" ")
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    line = line[1:] if negated else line
    line = line[1:] if line.startswith("\\") else line
    folders_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    body = _translate(line.lstrip("/"))
    regex = re.compile(body + r"\Z" if anchored else r"(?:.*/)?" + body + r"\Z")
    return _Pattern(base=base, regex=regex, negated=negated, folders_only=folders_only)


@attrs.frozen
class IgnoreRules:
    """The patterns of every ``.gitignore`` that applies, outermost first."""

    patterns: tuple[_Pattern, ...] = ()

    def with_folder(self, folder: str) -> IgnoreRules:
        """These rules plus those of ``folder/.gitignore``, if there is one."""
        added = load_rules(folder)
        return IgnoreRules(self.patterns + added) if added else self

    def ignored(self, path: str, *, is_dir: bool) -> bool:
        path = os.path.abspath(path)
        verdict = False
        for pattern in self.patterns:
            if pattern.folders_only and not is_dir:
                continue
            relative = os.path.relpath(path, pattern.base).replace(os.sep, "/")
            if not relative.startswith("..") and pattern.regex.match(relative):
                verdict = not pattern.negated
        return verdict


def load_rules(folder: str) -> tuple[_Pattern, ...]:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()
    except OSError:
        return ()
    base = os.path.abspath(folder)
    return tuple(p for p in (_parse(line, base) for line in lines) if p is not None)


def git_root(path: str) -> str | None:
    """The nearest folder at or above ``path`` holding ``.git``, or None outside a repository."""
    folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
