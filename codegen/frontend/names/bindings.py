"""What a statement binds, and to what: the vocabulary of :mod:`codegen.frontend.names.resolve`.

A value is a string. An npudsl object is its dotted path (``"npudsl"``,
``"npudsl.decorators"``, ``"npudsl.on_stream"``); anything else is one of
:data:`OTHER`, :data:`STAR` (whatever a star import of another module may bind)
or :data:`UNBOUND`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import npudsl
from codegen.index.children import children
from npudsl.schedule import DECORATOR_FIELDS

__all__ = [
    "DECORATORS",
    "NPUDSL_EXPORTS",
    "OTHER",
    "STAR",
    "UNBOUND",
    "attribute",
    "decorator_of",
    "import_values",
    "paired",
    "pattern_names",
    "spelled",
    "target_names",
    "walrus_names",
]

DECORATORS = frozenset(DECORATOR_FIELDS)
NPUDSL_EXPORTS = tuple(npudsl.__all__)  # what ``from npudsl import *`` binds
_STAR_EXPORTS = {"npudsl": NPUDSL_EXPORTS, "npudsl.decorators": tuple(sorted(DECORATORS))}

OTHER = "?"
STAR = "*"
UNBOUND = "-"


def _is_npudsl(module: str | None, level: int = 0) -> bool:
    return not level and module is not None and (module == "npudsl" or module.startswith("npudsl."))


def import_values(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str]]:
    """(local name, value) for each name the import binds; ``("*", STAR)`` for a star import of another module."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name if _is_npudsl(alias.name) else OTHER
            else:
                root = alias.name.split(".", 1)[0]
                yield root, root if root == "npudsl" else OTHER
        return
    npudsl = _is_npudsl(node.module, node.level)
    for alias in node.names:
        if alias.name == "*":
            exports = _STAR_EXPORTS.get(node.module or "") if npudsl else None
            yield from ((name, f"{node.module}.{name}") for name in exports) if exports else [("*", STAR)]
        else:
            yield alias.asname or alias.name, f"{node.module}.{alias.name}" if npudsl else OTHER


def attribute(value: str, attrs: list[str]) -> str:
    """The value of ``<value>.a.b``."""
    if not attrs or not value.startswith("npudsl"):
        return value
    return ".".join([value, *attrs])


def decorator_of(value: str) -> str | None:
    """``"on_stream"`` for ``npudsl.on_stream`` or ``npudsl.decorators.on_stream``; None for anything else."""
    module, _, name = value.rpartition(".")
    return name if module in ("npudsl", "npudsl.decorators") and name in DECORATORS else None


def spelled(node: ast.expr) -> tuple[str, list[str]] | None:
    """A decorator ``a.b.c`` or ``a.b.c(...)`` as ("a", ["b", "c"]); None for any other expression."""
    target = node.func if isinstance(node, ast.Call) else node
    attrs: list[str] = []
    while isinstance(target, ast.Attribute):
        attrs.append(target.attr)
        target = target.value
    return (target.id, attrs[::-1]) if isinstance(target, ast.Name) else None


def target_names(target: ast.expr) -> Iterator[str]:
    """The names an assignment, ``for`` or ``with ... as`` target binds (not attributes or items)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from target_names(element)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def pattern_names(pattern: ast.pattern) -> Iterator[str]:
    """The names a ``case`` pattern captures."""
    for node in ast.walk(pattern):
        name = getattr(node, "name", None) if isinstance(node, (ast.MatchAs, ast.MatchStar)) else None
        if isinstance(node, ast.MatchMapping):
            name = node.rest
        if name:
            yield name


def walrus_names(nodes: list[ast.AST]) -> Iterator[str]:
    """Names bound by ``:=`` in these expressions (a comprehension's too: it binds the enclosing scope)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            yield node.target.id
        if not isinstance(node, (ast.Lambda, ast.stmt)) or node in nodes:
            stack.extend(children(node))


def paired(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """``(name, element)`` for each name of a tuple or list of plain names unpacking a display of as many
    elements, none starred (``A, B = 8, 16``); else ``None``."""
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))):
        return None
    names, elements = target.elts, value.elts
    if len(names) != len(elements) or not all(isinstance(n, ast.Name) for n in names):
        return None
    if any(isinstance(e, ast.Starred) for e in elements):
        return None
    return [(n.id, e) for n, e in zip(names, elements) if isinstance(n, ast.Name)]
