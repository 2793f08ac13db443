"""What a run knows across files: stream functions, submodules and their call sites.

Built with the standard ``ast`` module (several times faster than a libcst parse),
before any file is rewritten, so a decorated class in one file is known at its
call sites in another. Three kinds of files are read: the decorated ones, the files that
name one of their stream functions (call sites), and the modules the decorated ones call
a function of by relative import (what it returns, ``codegen/index/return_files.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

import attrs

from codegen.driver import pyast
from codegen.driver.modules import ModuleId
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.index.definitions import Definitions
from codegen.index.info import CalleeInfo, CallInfo, RunIndex
from codegen.index.pending import Returns
from codegen.index.return_files import File, Wanted, wanted
from codegen.index.walked import walked
from codegen.lower.flow.callsites import find_calls

__all__ = ["CalleeInfo", "CallInfo", "ModuleId", "RunIndex", "build_index"]

Files = Iterable[tuple[str | ModuleId, str]]
Ask = Callable[[frozenset[str]], Files]
_Parsed = list[tuple[str, ast.Module, str]]


def build_index(files: Files, callers: Ask | None = None, modules: Ask | None = None) -> RunIndex:
    """Index ``(module, source)`` pairs (a module is its run key, or its :class:`ModuleId`); sources that
    fail to parse are skipped.

    ``callers``, when given, is asked once the stream functions of ``files`` are known, with the names
    their modules define them under (a class, a function): the files it returns are indexed too, for their
    calls and submodules. ``modules``, when given, is asked for the run's files by dotted module name: those
    that ``files`` call a function or class of by relative import (``from .ops import f``), read for what
    their functions return (without it, ``callers`` is asked with the names imported). One pass, as if every
    file had been given at once.
    """
    found = Definitions()
    identities: dict[str, ModuleId] = {}
    decorated = _added(_parsed(files, identities), found)
    if callers is None or not found.callees:
        return _indexed(found, identities, decorated, {}, _returns(decorated, [], {}))
    trees = decorated + _added(_parsed(callers(_defined(found.callees)), identities), found)
    imports = {module: scan.imported_names(tree) for module, tree, _ in trees}
    read, pending = _Reader(identities, found, imports, modules, callers).return_files(decorated, trees)
    return _indexed(found, identities, trees, imports, _returns(trees, read, pending, modules))


def _returns(trees: _Parsed, read: _Parsed, pending: dict[str, str], more: Ask | None = None) -> Returns:
    """The return facts; ``more`` reads a module of the run no relative import named, when a lowering asks."""
    return Returns({module: tree for module, tree, _ in trees + read}, pending, more)


def _indexed(
    found: Definitions,
    identities: dict[str, ModuleId],
    trees: _Parsed,
    imports: dict[str, dict[str, tuple[str, str]]],
    returns: Returns,
) -> RunIndex:
    """The index of what ``found`` defines, with the calls of its stream functions in ``trees``."""
    partial = RunIndex(
        callees=found.callees,
        classes={k: tuple(v) for k, v in found.classes.items()},
        submodules=found.submodules,
        elements=found.elements,
        calls={},
        modules=identities,
        shared_records=frozenset(found.shared),
        imports=imports or {module: scan.imported_names(tree) for module, tree, _ in trees},
        returns=returns,
    )
    found.settle(partial)  # bases in other modules: their submodules
    return _with_calls(partial, trees)


def _with_calls(partial: RunIndex, trees: _Parsed) -> RunIndex:
    """The index with the calls of its stream functions in ``trees`` (those searched for call sites)."""
    calls: dict[str, list[CallInfo]] = {}
    stream_calls: dict[str, list[CallInfo]] = {}
    for module, tree, source in trees:
        for callee, info in _collect_calls(module, tree, partial, Positions(source)):
            stream_calls.setdefault(callee, []).append(info)
            if partial.callees[callee].auto:
                calls.setdefault(callee, []).append(info)
    return attrs.evolve(
        partial,
        calls={k: tuple(v) for k, v in calls.items()},
        stream_calls={k: tuple(v) for k, v in stream_calls.items()},
    )


@attrs.frozen
class _Reader:
    """Reads the files the return facts need, each once, none that the run has read already."""

    identities: dict[str, ModuleId]
    found: Definitions
    imports: dict[str, dict[str, tuple[str, str]]]
    modules: Ask | None
    callers: Ask

    def return_files(self, decorated: _Parsed, trees: _Parsed) -> tuple[_Parsed, dict[str, str]]:
        """The files of the base classes ``decorated`` derive from by relative import, parsed (their submodules);
        and the sources of the other modules they, their callers (``trees``: a caller's GE fork orders on what
        it calls, whatever other files the run holds) or those bases' ``__init__`` call into (parsed when asked)."""
        first = wanted(self._files(trees))
        # no decorated file of the run is read here (those are indexed first): a base whose file mentions npudsl is
        # one the run does not hold, read for its facts only (``codegen/driver/sibling_files.py``)
        bases = _added(_parsed(self._ask(first, first.bases), self.identities), self.found, streams=False)
        self.imports.update({module: scan.imported_names(tree) for module, tree, _ in bases})
        held = [t for t in (*trees, *bases) if self.identities[t[0]].dotted in first.bases]
        called = first | wanted(self._files(held), called_only=True)
        pending = {}
        for module, source in self._ask(called, called.modules):
            identity = self.identities[ModuleId.of(module).key] = ModuleId.of(module)
            pending[identity.key] = source
        return bases, pending

    def _files(self, parsed: _Parsed) -> list[File]:
        return [(self.identities[key], self.imports[key], tree, source) for key, tree, source in parsed]

    def _ask(self, want: Wanted, dotted: frozenset[str]) -> Files:
        """The run's files of the modules ``dotted`` names that it has not read yet."""
        missing = dotted - {m.dotted for m in self.identities.values()}
        if not missing:
            return []
        answer = self.modules(missing) if self.modules is not None else self.callers(want.names)
        return [(m, s) for m, s in answer if ModuleId.of(m).dotted in missing]


def _parsed(files: Files, modules: dict[str, ModuleId]) -> _Parsed:
    """(key, tree, source) of each file that parses; ``modules`` learns their identities."""
    found = []
    for module, source in files:
        identity = ModuleId.of(module)
        source = pyast.without_bom(source)
        try:
            found.append((identity.key, pyast.parse(source), source))
        except (SyntaxError, ValueError):
            continue
        walked(found[-1][1])  # once: the walks of its statements, functions and classes are read from it
        modules[identity.key] = identity
    return found


def _added(parsed: _Parsed, found: Definitions, streams: bool = True) -> _Parsed:
    for module, tree, source in parsed:
        found.add(module, tree, source, streams=streams)
    return parsed


def _defined(callees: dict[str, CalleeInfo]) -> frozenset[str]:
    """The module-level names (a class, a function) the stream functions are defined under."""
    return frozenset(key.split(":", 1)[1].split(".", 1)[0] for key in callees)


def _collect_calls(
    module: str, tree: ast.Module, index: RunIndex, positions: Positions
) -> Iterable[tuple[str, CallInfo]]:
    """Resolved calls of every stream function (automatic or not), with their positions."""
    for site in find_calls(module, tree, index):  # type: ignore[arg-type]  # flow._Index: settable dicts
        own = index.callees.get(f"{module}:{site.caller}")
        info = CallInfo(
            callee=site.key,
            module=module,
            caller=site.caller,
            spelled=site.spelled,
            caller_stream=own.tag if own is not None else "default",
            bindable=site.bindable,
            loc=positions.loc(site.call),
            unkept=site.unkept,
        )
        yield site.key, info
