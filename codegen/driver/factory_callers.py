"""The functions that make an object of a decorated class, so the files calling them are searched as call sites.

``model.py`` with ``from .shapes import expert`` and ``self.shared = expert(d)``, where ``shapes.py`` holds ``def
expert(d): return Expert(d)`` of a class with a stream function: ``model.py`` names neither npudsl nor ``Expert``, yet
``self.shared(x)`` there calls ``Expert.forward`` (``codegen/index/factory_made.py``). The run's callers are found by a
text search for the names the stream functions are defined under (``indexing.py``); a module-level function of those
files (or of the decorated ones) whose every ``return`` calls one of those classes is searched for as well, and a
class whose ``__init__`` calls such a function holds that class's object (``subclass_callers.holders``). Read on the
text's trees alone, by the last name called: a file found here is indexed, and what its calls reach is decided there,
by the index's own rules; a file that does not parse makes none.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.driver import pyast
from codegen.index.walked import walked_of

__all__ = ["makers"]


def makers(sources: Iterable[str], classes: frozenset[str]) -> frozenset[str]:
    """The module-level functions of ``sources`` whose every ``return`` calls one of ``classes`` (by last name)."""
    found: set[str] = set()
    for source in sources:
        try:
            tree = pyast.parse(pyast.without_bom(source))
        except (SyntaxError, ValueError):
            continue
        found |= {fn.name for fn in tree.body if isinstance(fn, ast.FunctionDef) and _makes(fn, classes)}
    return frozenset(found - classes)


def _makes(fn: ast.FunctionDef, classes: frozenset[str]) -> bool:
    returned = [node.value for node in walked_of(fn, ast.Return)]  # the walk the index reads again
    return bool(returned) and all(_last_called(value) in classes for value in returned)


def _last_called(value: ast.expr | None) -> str | None:
    """``Expert(...)`` or ``layers.Expert(...)``: ``"Expert"``."""
    func = value.func if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None
