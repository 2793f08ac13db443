"""The run's return facts, read from a module when a lowering first asks (``index.returns``).

Most targets never ask what another file's functions return (GE's fork edges and returned records do,
``codegen/index/returns.py``), and a file the run reads only for that (``from .ops import f``: ``ops.py``)
cost a full parse on every target. Its source is kept instead and parsed on the first question, once per
process; the files of the run that were parsed anyway keep their trees, read on the first question too
(most targets ask about a few modules of a run). The facts are the same either way:
:func:`codegen.index.returns.function_returns` of the file's tree. The same files answer which parameters their
functions write in place (``codegen/lower/flow/imported_writes.py``): :meth:`Returns.tree_of` parses one when a
caller first passes a tensor to one of them, once. A module of the run that no file imports relatively (``from
pkg.helpers import bump``, or a helper's own import of a third module) is asked of the run then (``more``), once:
reading every file an absolute import names would cost a read per ``import torch``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Mapping

from codegen.driver import pyast
from codegen.driver.modules import ModuleId
from codegen.index.returns import function_returns

__all__ = ["Returns"]

More = Callable[[frozenset[str]], Iterable[tuple[str | ModuleId, str]]]  # dotted names -> the run's files of them


class Returns(Mapping[str, Mapping[str, str]]):
    """module -> {function: its return annotation}; the facts of a module parsed (``trees``) or not yet
    (``pending``: key -> source) are read when asked."""

    def __init__(self, trees: dict[str, ast.Module], pending: dict[str, str], more: More | None = None) -> None:
        self._known: dict[str, Mapping[str, str]] = {}
        self._trees = dict(trees)
        self._pending = {key: source for key, source in pending.items() if key not in trees}
        self._held: dict[str, str | ast.Module | None] = {**self._pending, **trees}  # what ``tree_of`` reads
        self._more = more
        self._asked: dict[str, ModuleId] = {}  # the modules ``more`` answered: their identities

    def __getitem__(self, module: str) -> Mapping[str, str]:
        found = self._known.get(module)
        if found is None:
            tree = self._trees.pop(module, None)
            if tree is None and module not in self._pending:
                tree = self.tree_of(module)  # a module of the run no relative import names: asked of the run
                if tree is None:
                    raise KeyError(module)
            found = function_returns(tree) if tree is not None else _returns_of(self._pending.pop(module))
            self._known[module] = found
        return found

    def tree_of(self, module: str) -> ast.Module | None:
        """The tree of a module the run holds (``module``: its run key); None when it holds none, or it does not
        parse."""
        if module not in self._held:
            self._held[module] = self._asked_for(module)
        held = self._held.get(module)
        if isinstance(held, str):
            held = self._held[module] = _parsed(held)
        return held

    def asked(self, module: str) -> ModuleId | None:
        """The identity of a module read by ``tree_of`` alone (an ``__init__`` resolves relative imports from
        itself)."""
        return self._asked.get(module)

    def _asked_for(self, dotted: str) -> str | None:
        """The source of the one file of the run that is the module ``dotted``, if the run has it."""
        answer = [] if self._more is None else list(self._more(frozenset({dotted})))
        found = [(ModuleId.of(m), source) for m, source in answer if ModuleId.of(m).dotted == dotted]
        if len(found) != 1:
            return None
        self._asked[dotted] = found[0][0]
        return found[0][1]

    def __iter__(self) -> Iterator[str]:
        return iter([*self._known, *self._trees, *self._pending])

    def __len__(self) -> int:
        return len(self._known) + len(self._trees) + len(self._pending)

    def __repr__(self) -> str:
        return f"Returns(known={sorted(self._known)}, pending={sorted([*self._trees, *self._pending])})"


def _returns_of(source: str) -> dict[str, str]:
    """What the functions of ``source`` return; nothing when it does not parse (it was never indexed)."""
    tree = _parsed(source)
    return function_returns(tree) if tree is not None else {}


def _parsed(source: str) -> ast.Module | None:
    try:
        return pyast.parse(pyast.without_bom(source))
    except (SyntaxError, ValueError):
        return None
