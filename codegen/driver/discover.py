"""Which files a run reads: the ``.py`` files under the paths given, like ruff and black find them.

- A path given by name is always read (unless ``exclude`` matches it), whatever its suffix.
- Walking a folder skips hidden folders, virtual environments (any folder with a
  ``pyvenv.cfg``), build output and caches (:data:`SKIPPED_FOLDERS`), and what the
  ``.gitignore`` files of the folder, its subfolders and its parents up to the
  repository root ignore.
- ``exclude`` patterns (``fnmatch`` globs) match a path relative to ``base``, any
  leading part of it, or any one of its names: ``build``, ``legacy/*``, ``*_pb2.py``.
- A file reached twice (given twice, or inside two paths given) is read once, for
  the first path it came from.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator

import attrs

from codegen.driver.gitignore import IgnoreRules, git_root, load_rules

__all__ = ["SKIPPED_FOLDERS", "Excludes", "discover"]

SKIPPED_FOLDERS = frozenset(
    {
        "__pycache__",
        "__pypackages__",
        "_build",
        "buck-out",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        "venv",
    }
)


@attrs.frozen(kw_only=True)
class Excludes:
    """``exclude`` globs, matched relative to ``base`` (the folder of the configuration, or the current one)."""

    patterns: tuple[str, ...] = ()
    base: str = "."

    def match(self, path: str) -> bool:
        if not self.patterns:
            return False
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.base)).replace(os.sep, "/")
        parts = relative.split("/")
        candidates = {"/".join(parts[:i]) for i in range(1, len(parts) + 1)} | set(parts)
        return any(fnmatch.fnmatchcase(c, p.rstrip("/")) for c in candidates for p in self.patterns)


def _skipped_folder(folder: str, name: str) -> bool:
    return (
        name.startswith(".")
        or name in SKIPPED_FOLDERS
        or name.endswith(".egg-info")
        or os.path.isfile(os.path.join(folder, name, "pyvenv.cfg"))
    )


def _outer_rules(root: str) -> IgnoreRules:
    """The ``.gitignore`` rules of ``root``'s parents, from the repository root down."""
    top = git_root(root)
    if top is None:
        return IgnoreRules()
    chain, folder = [], os.path.dirname(os.path.abspath(root))
    while len(folder) >= len(top):
        chain.append(folder)
        folder = os.path.dirname(folder)
    return IgnoreRules(tuple(p for f in reversed(chain) for p in load_rules(f)))


def _walk(root: str, excludes: Excludes, gitignore: bool) -> Iterator[str]:
    rules = {os.path.abspath(root): _outer_rules(root) if gitignore else IgnoreRules()}
    for folder, dirs, files in os.walk(root):
        here = rules.pop(os.path.abspath(folder))
        here = here.with_folder(folder) if gitignore else here

        def keep(name: str, is_dir: bool) -> bool:
            path = os.path.join(folder, name)  # noqa: B023
            return not here.ignored(path, is_dir=is_dir) and not excludes.match(path)  # noqa: B023

        dirs[:] = sorted(d for d in dirs if not _skipped_folder(folder, d) and keep(d, True))
        rules.update((os.path.abspath(os.path.join(folder, d)), here) for d in dirs)
        yield from (os.path.join(folder, f) for f in sorted(files) if f.endswith(".py") and keep(f, False))


def discover(
    paths: Iterable[str],
    *,
    excludes: Excludes = Excludes(),
    gitignore: bool = True,
) -> Iterator[tuple[str, str]]:
    """(file, root) for every file to read under ``paths``, in a stable order, each file once."""
    seen: set[str] = set()
    for root in paths:
        found = _walk(root, excludes, gitignore) if os.path.isdir(root) else iter([root] * (not excludes.match(root)))
        for path in found:
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                yield path, root
