"""The functions that make an object of a decorated class, so the files calling them are searched as call sites.

``model.py`` with ``from .shapes import expert`` and ``self.shared = expert(d)``, where ``shapes.py`` holds ``def
expert(d): return Expert(d)`` of a class with a stream function: ``model.py`` names neither npudsl nor ``Expert``, yet
``self.shared(x)`` there calls ``Expert.forward`` (``codegen/index/factory_made.py``). The run's callers are found by a
text search for the names the stream functions are defined under (``indexing.py``); a module-level function of those
files (or of the decorated ones) whose every ``return`` calls one of those classes (or returns a local bound once to
such a call) is searched for as well, and a
class whose ``__init__`` calls such a function holds that class's object (``subclass_callers.holders``). Read on the
text's trees alone, by the last name called: a file found here is indexed, and what its calls reach is decided there,
by the index's own rules; a file that does not parse makes none.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codegen.driver import pyast
from codegen.index.factory_made import bound_value
from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import scope_nodes

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
    """Every ``return`` of ``fn`` calls one of ``classes``, or returns a local bound once to such a call (``layer =
    Expert(d); init(layer); return layer``, ``factory_made.bound_value``)."""
    returned = [node.value for node in walked_of(fn, ast.Return)]  # the walk the index reads again
    if any(isinstance(value, ast.Name) for value in returned):
        nodes = scope_nodes(fn)
        returned = [bound_value(fn, value, nodes) for value in returned]
    return bool(returned) and all(_last_called(value) in classes for value in returned)


def _last_called(value: ast.expr | None) -> str | None:
    """``Expert(...)`` or ``layers.Expert(...)``: ``"Expert"``."""
    func = value.func if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None
