"""The run's return facts, read from a module when a lowering first asks (``index.returns``).

Most targets never ask what another file's functions return (GE's fork edges and returned records do,
``codegen/index/returns.py``), and a file the run reads only for that (``from .ops import f``: ``ops.py``)
cost a full parse on every target. Its source is kept instead and parsed on the first question, once per
process; the files of the run that were parsed anyway keep their trees, read on the first question too
(most targets ask about a few modules of a run). The facts are the same either way:
:func:`codegen.index.returns.function_returns` of the file's tree. The same files answer which parameters their
functions write in place (``codegen/lower/flow/imported_writes.py``): :meth:`Returns.tree_of` parses one when a
caller first passes a tensor to one of them, once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from codegen.driver import pyast
from codegen.index.returns import function_returns

__all__ = ["Returns"]


class Returns(Mapping[str, Mapping[str, str]]):
    """module -> {function: its return annotation}; the facts of a module parsed (``trees``) or not yet
    (``pending``: key -> source) are read when asked."""

    def __init__(self, trees: dict[str, ast.Module], pending: dict[str, str]) -> None:
        self._known: dict[str, Mapping[str, str]] = {}
        self._trees = dict(trees)
        self._pending = {key: source for key, source in pending.items() if key not in trees}
        self._held: dict[str, str | ast.Module | None] = {**self._pending, **trees}  # what ``tree_of`` reads

    def __getitem__(self, module: str) -> Mapping[str, str]:
        found = self._known.get(module)
        if found is None:
            tree = self._trees.pop(module, None)
            found = function_returns(tree) if tree is not None else _returns_of(self._pending.pop(module))
            self._known[module] = found
        return found

    def tree_of(self, module: str) -> ast.Module | None:
        """The tree of a module the run holds (``module``: its run key); None when it holds none, or it does not
        parse."""
        held = self._held.get(module)
        if isinstance(held, str):
            held = self._held[module] = _parsed(held)
        return held

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
