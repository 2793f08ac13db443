"""The index of a run: which of its files it reads, and the progress shown while it reads them.

The decorated files (they name npudsl) are read first; then the files that name one of their stream
functions (call sites, found by a text search), and those that reach one only through a base class that holds
it (``subclass_callers.py``); then the modules the decorated files call a function of by relative import, for
what it returns (``codegen/index/return_files.py``: those are parsed only when a lowering asks, so they show no
parsing progress here). A module of a run's package that the run's files do not hold is read from disk for those
facts (``sibling_files.py``), never transformed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from codegen.driver import pyast
from codegen.driver.factory_callers import makers
from codegen.driver.modules import ModuleId, module_id
from codegen.driver.pyast import mentions_npudsl
from codegen.driver.reading import SourceFile
from codegen.driver.sibling_files import siblings
from codegen.driver.subclass_callers import holders, holding_holders, through_bases
from codegen.driver.words import words

if TYPE_CHECKING:
    from codegen.index.index import RunIndex

__all__ = ["Progress", "index_run", "run_index"]

Progress = Callable[[str, int, int], None]
_Ask = Callable[[frozenset[str]], list[tuple[ModuleId, str]]]


def _parse_ahead(sources: Sequence[tuple[object, str]], phase: str, progress: Progress | None) -> None:
    """Parse now what the index will parse, so a long indexing phase shows progress (trees are shared)."""
    if progress is None:
        return
    for done, (_, source) in enumerate(sources, 1):
        with contextlib.suppress(SyntaxError, ValueError):
            pyast.parse(source)
        progress(phase, done, len(sources))


def index_run(files: list[SourceFile], progress: Progress | None = None) -> RunIndex:
    """Index decorated files, then the files that name one of their classes or functions (their call sites),
    then the modules they call a function of by relative import (what it returns)."""
    from codegen.index.index import build_index  # libcst comes with it: only runs with a decorated file pay for it

    decorated = [
        (module_id(f.path, f.module), f.source) for f in files if f.source is not None and mentions_npudsl(f.source)
    ]
    _parse_ahead(decorated, "indexing", progress)
    return build_index(decorated, _callers(files, progress), _modules(files))


def _callers(
    files: list[SourceFile], progress: Progress | None
) -> Callable[[frozenset[str]], list[tuple[ModuleId, str]]]:
    """The files that name one of ``defined`` and not npudsl (asked once the stream functions are known), and
    those that derive a class from one holding such a class as a submodule, or hold one (``subclass_callers.py``)."""

    def callers(defined: frozenset[str]) -> list[tuple[ModuleId, str]]:
        names = words(defined)
        plain = [(f, f.source) for f in files if f.source is not None and not mentions_npudsl(f.source)]
        found = [(f, s) for f, s in plain if names.search(s)]
        decorated = [f.source for f in files if f.source is not None and mentions_npudsl(f.source)]
        made = makers([*decorated, *(s for _, s in found)], defined)  # their factories (``factory_callers.py``)
        calling = words(made) if made else None
        taken = {id(s) for _, s in found}
        found += [(f, s) for f, s in plain if calling and id(s) not in taken and calling.search(s)]
        holding = holders([*decorated, *(s for _, s in found)], defined | made)
        taken = {id(s) for _, s in found}
        found += through_bases([(f, s) for f, s in plain if id(s) not in taken], holding)
        taken |= {id(s) for _, s in found}
        found += holding_holders([(f, s) for f, s in plain if id(s) not in taken], holding)
        named = [(module_id(f.path, f.module), s) for f, s in found]  # the identities of the files found only
        _parse_ahead(named, "indexing call sites", progress)
        return named

    return callers


def _modules(files: list[SourceFile]) -> _Ask:
    """The files of the modules ``dotted`` names (a run key ends with its dotted name); where the run has none, the
    file of its package on disk (``sibling_files.py``)."""
    unheld = siblings(files)

    def modules(dotted: frozenset[str]) -> list[tuple[ModuleId, str]]:
        held = [
            (module_id(f.path, f.module), f.source)
            for f in files
            if f.source is not None and f.module.rpartition("/")[2] in dotted
        ]
        return held + unheld(dotted - {f.module.rpartition("/")[2] for f in files})

    return modules


def run_index(files: list[SourceFile], progress: Progress | None = None) -> RunIndex | None:
    """:func:`index_run`, or None when no file names npudsl (then no file has anything to do)."""
    if not any(f.source is not None and mentions_npudsl(f.source) for f in files):
        return None
    return index_run(files, progress)
