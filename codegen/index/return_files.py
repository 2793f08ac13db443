"""Which files of a run the return facts need: the ones a module calls a function or class of, by relative import.

The index knows what the run's functions return (``codegen/index/returns.py``) so that GE can order on a tensor
a call makes. A module only asks that of the names it calls (``grouped_matmul(x)``, ``Linear(4, 4)``, whose
``forward`` it later calls as a submodule) and of its classes' bases (``class MLA(MLAWeights)``: the submodules
their ``__init__`` assigns). A name is taken as called when the text names it beyond its import (a call always
does; a mention in a comment only costs a read), decided without walking the tree. A name imported from a
package may be a module of it (``from . import helpers``, then ``helpers.bump(x)``): that module is asked for too
(what ``helpers.bump`` writes in place, ``codegen/lower/flow/imported_writes.py``), found only where the run has it.

Reading every file that merely mentions a relatively imported name cost a parse and a call-site search per
file, on every target; reading only the modules those names come from, once, and searching none of them for
call sites (they are not callers), keeps every fact at a fraction of the cost. A base class's file is read
one level further: the classes its ``__init__`` assigns may come from another file of the package, and
``submodule_returns`` looks them up there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

import attrs

from codegen.driver.modules import ModuleId
from codegen.lower.flow.imports import resolve_spec

__all__ = ["File", "Wanted", "wanted"]

File = tuple[ModuleId, Mapping[str, tuple[str, str]], ast.Module, str]  # identity, imports, tree, source


@attrs.frozen
class Wanted:
    """The dotted modules some module's return facts read, and which of them hold a base class."""

    modules: frozenset[str] = frozenset()
    bases: frozenset[str] = frozenset()  # their files are read for their own called names too
    names: frozenset[str] = frozenset()  # the names imported from them, as their modules define them

    def __or__(self, other: Wanted) -> Wanted:
        return Wanted(self.modules | other.modules, self.bases | other.bases, self.names | other.names)


def wanted(files: Iterable[File], *, called_only: bool = False) -> Wanted:
    """The modules that the relative imports of each file name (its imports as ``scan.imported_names`` reads
    them), for the names it calls or derives a class from (``called_only``: the calls alone, for a base class's
    file)."""
    found = Wanted()
    for module, imports, tree, source in files:
        package = module.dotted if module.package else module.dotted.rpartition(".")[0]
        relative = {local: origin for local, origin in imports.items() if origin[0].startswith(".")}
        bases = frozenset() if called_only else _bases(tree) & relative.keys()
        used = {local: origin for local, origin in relative.items() if local in bases or _called(local, source)}
        named = {local: resolve_spec(spec, package) for local, (spec, _) in used.items()}
        submodules = {f"{named[local]}.{name}" for local, (_, name) in used.items()}  # ``from . import helpers``
        found |= Wanted(
            frozenset(named.values()) | submodules,
            frozenset(named[b] for b in bases),
            frozenset(n for _, n in used.values()),
        )
    return found


def _called(local: str, source: str) -> bool:
    """The source spells ``local`` again after importing it: a superset of calling it (a substring count, far
    cheaper than a word-bounded search)."""
    return source.count(local, source.find(local) + 1) > 0


def _bases(tree: ast.Module) -> frozenset[str]:
    """The plain names the module's classes derive from."""
    return frozenset(
        base.id
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for base in node.bases
        if isinstance(base, ast.Name)
    )
