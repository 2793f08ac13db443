"""The files that reach a decorated submodule only through a base class, found a round at a time by name.

``class Attn(AttnWeights)`` in ``top.py``, where ``weights.py``'s ``AttnWeights.__init__`` makes ``self.shared =
Shared()`` of a decorated class: ``top.py`` names neither npudsl nor ``Shared``, yet ``self.shared(x)`` there is a
call of a stream function (``codegen/lower/flow/inherited_callees.py``). The run's callers are found by a text
search for the names the stream functions are defined under (``indexing.py``); from those files and the decorated
ones, the classes whose ``__init__`` makes a submodule of such a class are read (their trees are the index's own,
shared within the run), and the files that define a class deriving from one of them are added, then the files
deriving from those, until a round adds none. A base is read in the text of the class statement (``class
Attn(AttnWeights):``, ``class Attn(weights.AttnWeights)``, ``class Attn(AttnWeights[T])``), so a file that only
imports or mentions a holder costs a search, not a parse: the run indexes no file beyond those that may make such a
call. A file whose class makes a submodule of a holder (``self.block = Block()``, where ``Block.__init__`` makes
``self.shared = Shared()``) is indexed too: ``self.block.shared(x)`` there calls the stream function
(``codegen/lower/flow/held_submodules.py``), and so is a file holding such a class in turn
(``self.mid.block.shared(x)``), a round at a time; such a file is parsed only where it names a holder.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import TypeVar

from codegen.driver import pyast
from codegen.driver.words import words
from codegen.index.scan import submodule_assignments

__all__ = ["holders", "holding_holders", "subclasses", "through_bases"]

_M = TypeVar("_M")
_CLASS = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.M)
_SUBSCRIPT = re.compile(r"\[.*", re.S)  # ``Weights[T]`` derives from ``Weights``


def holders(sources: Iterable[str], classes: frozenset[str]) -> frozenset[str]:
    """The classes of ``sources`` whose ``__init__`` makes a submodule of one of ``classes`` (``self.shared =
    Shared()``, ``self.shared = shared.Shared()``); a source that does not parse holds none."""
    found: set[str] = set()
    for source in sources:
        try:
            tree = pyast.parse(pyast.without_bom(source))
        except (SyntaxError, ValueError):
            continue
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            made = {name.rpartition(".")[2] for name in submodule_assignments(cls).values()}
            if made & classes:
                found.add(cls.name)
    return frozenset(found)


def subclasses(source: str, bases: frozenset[str]) -> frozenset[str]:
    """The classes ``source`` defines with one of ``bases`` among their bases, by name or as an attribute."""
    found = set()
    for match in _CLASS.finditer(source):
        parts = (_SUBSCRIPT.sub("", part.split("=")[-1]).strip() for part in match.group(2).split(","))
        named = {part.rpartition(".")[2] for part in parts}
        if named & bases:
            found.add(match.group(1))
    return frozenset(found)


def through_bases(candidates: list[tuple[_M, str]], holding: frozenset[str]) -> list[tuple[_M, str]]:
    """The ``(module, source)`` pairs of ``candidates`` that define a subclass of one of ``holding``, or of such a
    subclass, and so on, in the order found."""
    found: list[tuple[_M, str]] = []
    left, bases = list(candidates), holding
    while bases and left:
        pattern = words(bases)
        made: set[str] = set()
        for pair in [p for p in left if pattern.search(p[1])]:
            derived = subclasses(pair[1], bases)
            if derived:
                found.append(pair)
                left.remove(pair)
                made |= derived
        bases = frozenset(made - holding)
        holding |= bases
    return found


def holding_holders(candidates: list[tuple[_M, str]], holding: frozenset[str]) -> list[tuple[_M, str]]:
    """The ``(module, source)`` pairs of ``candidates`` that define a class whose ``__init__`` makes a submodule of
    one of ``holding``, or of such a class, and so on (parsed only where the source names one), in the order
    found."""
    found: list[tuple[_M, str]] = []
    left = list(candidates)
    while holding and left:
        pattern = words(holding)
        made: set[str] = set()
        for pair in [p for p in left if pattern.search(p[1])]:
            held = holders([pair[1]], holding)
            if held:
                found.append(pair)
                left.remove(pair)
                made |= held
        holding = frozenset(made)
    return found
