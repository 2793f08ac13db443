"""The modules of a run's packages that the run does not hold, read from disk for their facts, never transformed.

``mla.py`` transformed alone, with ``class MLADecode(MLAWeights)`` and ``from .layers import MLAWeights``: the run
does not hold ``layers.py``, so nothing it reads said what ``MLAWeights``'s methods write, and the file kept no
overlap (``read_classes.py``: a base the run cannot read writes any of the object's state). Python imports
``layers.py`` from the folder beside ``mla.py`` when the model runs, so that file is the one whose facts hold: its
classes, their bases, which methods write which state, which attributes hold no tensor, what its functions return
and write. The index asks for a module by dotted name when a question needs it (``codegen/index/pending.py``); a
module the run's files do not hold is then read from disk where a file of the run's package would be: under the
top package of a file of the run (a folder with ``__init__.py``), or beside a file that is in no package (its
folder), the file the import system would take there (a package's ``__init__.py`` before a module of the same
name; a compiled extension before either is not read). Read once per run, lazily, by the reader of the run's own
files (``reading.py``); a file that cannot be read or parsed answers nothing, so the worst case stays.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from importlib.machinery import EXTENSION_SUFFIXES

import attrs

from codegen.driver.modules import ModuleId, module_id, module_name_for
from codegen.driver.reading import SourceFile, read_source

__all__ = ["Siblings", "siblings"]

Siblings = Callable[[frozenset[str]], list[tuple[ModuleId, str]]]


def siblings(files: Iterable[SourceFile]) -> Siblings:
    """The sources of the modules named (dotted) that the run's packages hold on disk but ``files`` do not; where
    the packages are is worked out on the first question (most runs ask none)."""
    files = list(files)
    read: dict[str, tuple[ModuleId, str] | None] = {}
    packages: list[_Packages] = []

    def on_disk(dotted: frozenset[str]) -> list[tuple[ModuleId, str]]:
        missing = dotted - read.keys()
        if missing and not packages:
            packages.append(_Packages.of(files))
        for name in missing:
            read[name] = packages[0].module(name)
        return [found for name in sorted(dotted) if (found := read[name]) is not None]

    return on_disk


@attrs.frozen
class _Packages:
    """Where the run's files are: folder -> the top names a module under it may start with (``""``: any, beside a
    file in no package), and the run's own files (never read again)."""

    roots: dict[str, frozenset[str]]
    taken: frozenset[str]
    listed: dict[str, frozenset[str]] = attrs.field(factory=dict, eq=False)  # folder -> its files, read once

    @classmethod
    def of(cls, files: list[SourceFile]) -> _Packages:
        roots: dict[str, frozenset[str]] = {}
        for file in files:
            path, dotted = os.path.abspath(file.path), file.module.rpartition("/")[2]
            package = os.path.basename(path) == "__init__.py"
            if os.path.isfile(path):  # not standard input without a file name
                folder = _above(path, dotted.count(".") + package)
                top = dotted.partition(".")[0] if "." in dotted or package else ""
                roots[folder] = roots.get(folder, frozenset()) | {top}
        return cls(roots, frozenset(os.path.abspath(f.path) for f in files))

    def module(self, dotted: str) -> tuple[ModuleId, str] | None:
        """The one file of a run's package that Python imports as ``dotted``, and its source."""
        top = dotted.partition(".")[0]
        for folder, tops in sorted(self.roots.items()):
            path = _imported(os.path.join(folder, *dotted.split(".")), self._exists) if tops & {top, ""} else None
            if path is not None and path not in self.taken and module_name_for(path) == dotted:
                source = read_source(path)
                return (module_id(path), source) if source is not None else None
        return None

    def _exists(self, path: str) -> bool:
        """Whether ``path`` is a file, from its folder's listing (read once per run: a name is looked for in some
        ten places, each asked of the disk before)."""
        folder, name = os.path.split(path)
        if folder not in self.listed:
            self.listed[folder] = _files_in(folder)
        return name in self.listed[folder]


def _files_in(folder: str) -> frozenset[str]:
    try:
        with os.scandir(folder) as entries:
            return frozenset(entry.name for entry in entries if entry.is_file())
    except OSError:
        return frozenset()


def _imported(base: str, exists: Callable[[str], bool]) -> str | None:
    """The source file Python imports for the module at ``base`` (a folder's ``__init__`` first, as the import
    system looks); None where there is none, or where a compiled extension comes first there (not read)."""
    for stem in (os.path.join(base, "__init__"), base):
        if any(exists(stem + suffix) for suffix in EXTENSION_SUFFIXES):
            return None
        if exists(f"{stem}.py"):
            return os.path.abspath(f"{stem}.py")
    return None


def _above(path: str, levels: int) -> str:
    """The folder ``levels`` above the one holding ``path``."""
    folder = os.path.dirname(path)
    for _ in range(levels):
        folder = os.path.dirname(folder)
    return folder
