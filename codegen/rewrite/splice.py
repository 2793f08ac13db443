"""Rewrite a module by parsing with libcst only the top-level statements that the plan can change.

The other statements are kept as their source text (see :mod:`codegen.rewrite.segments`),
so a module costs an ``ast`` parse (already done by the index) plus a libcst parse and
print of its decorated classes and functions, instead of a libcst round trip of all of it.
A statement is parsed on its own after a probe that sets libcst's default indentation and
newline to the whole module's, so each node is the one a parse of the whole module gives.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Collection, Iterator, Sequence

import libcst as cst

from codegen.frontend.collect import NpudslNames
from codegen.index.children import unordered_walk
from codegen.index.scan import functions_by_qualname
from codegen.lower.plan import ModulePlan
from codegen.rewrite.imports import finish_module
from codegen.rewrite.module import ModuleRewriter
from codegen.rewrite.segments import Statement, Style, Unit, layout
from codegen.rewrite.textunit import rewrite_unit
from codegen.targets.base import Spelling

__all__ = ["rewrite_source"]

_NEWLINE = re.compile(r"\r\n?|\n")
_LONE_CR = re.compile(r"\r(?!\n)")


def rewrite_source(source: str, tree: ast.Module, plan: ModulePlan, spelling: Spelling, names: NpudslNames) -> str:
    """The module ``source`` (``tree`` is its ``ast``) rewritten by ``plan``, as a libcst round trip would print it."""
    style = _style(source, tree)
    if not source.endswith(("\n", "\r")):  # libcst parses as if the newline were there, and drops it at the end
        return rewrite_source(source + style.newline, tree, plan, spelling, names)[: -len(style.newline)]
    shape = layout(source, tree)
    rewriter = ModuleRewriter(plan, spelling, names, functions_by_qualname(tree))
    chosen = _to_parse(shape.units, plan, names)
    body = []
    for i, unit in enumerate(shape.units):
        text = rewrite_unit(unit, shape.lines, plan, spelling, names, style) if i in chosen else None
        if unit.imports and ";" not in unit.text:
            body.append(Statement(unit=unit))  # parsed only if the import trim needs it (``finish_module``)
        elif i in chosen and text is None:
            body.append(Statement(unit=unit, node=_parse(unit, style).visit(rewriter)))
        else:
            body.append(Statement(unit=unit, text=text))
    code = finish_module(body, plan, spelling, names, style, lambda unit: _parse(unit, style).visit(rewriter))
    return shape.header + code + _footer(shape.footer, style)


def _style(source: str, tree: ast.Module) -> Style:
    """The indentation and newline libcst takes as the module's defaults: the first indent, the first newline."""
    found = _NEWLINE.search(source)
    return Style(indent=_first_indent(source, tree), newline=found.group() if found else "\n")


def _first_indent(source: str, tree: ast.Module) -> str:
    """The first ``INDENT`` token's text. Simple statements hold none (a module-level one cannot start
    indented), so the tokens are read from the first compound statement on, not from the top.

    The tokenizer reads lines ended by ``\n`` only; where a lone ``\r`` ends some (``ast`` counts it as a
    line end, the tokenizer does not), it reads from the top as before.
    """
    first = next((node for node in tree.body if _compound(node)), None)
    if first is None:
        return "    "
    lines = io.StringIO(source)
    if not _LONE_CR.search(source):
        for _ in range(first.lineno - 1):
            lines.readline()
    for token in tokenize.generate_tokens(lines.readline):
        if token.type == tokenize.INDENT:
            return token.string
    return "    "


def _compound(node: ast.stmt) -> bool:
    """A statement with a block (``def``, ``class``, ``if``, ``with``, ``match``...)."""
    return "body" in node._fields or "cases" in node._fields


def _to_parse(units: Sequence[Unit], plan: ModulePlan, names: NpudslNames) -> set[int]:
    """The units that can change, or whose names or form the module-level edits need."""
    local = [*names.aliases, *names.modules]
    tops = {qualname.split(".")[0] for qualname in [*plan.functions, *plan.callers]}
    chosen = {i for i, unit in enumerate(units) if _needed(unit, local, tops)}
    first = next((i for i, unit in enumerate(units) if not unit.imports), None)
    if first is not None and units[first].docstring is None:
        chosen.add(first)  # may be the docstring the new imports go after: only libcst can tell
    return chosen


def _needed(unit: Unit, local: Collection[str], tops: Collection[str]) -> bool:
    """Imports: those unused npudsl names may leave (``finish_module`` also drops a trailing ``;``).

    Other statements: those that spell an npudsl name (a decorator to strip, or a use that
    keeps its import), or hold a planned function or call site.
    """
    if unit.imports:
        return bool(local) and ("npudsl" in unit.text or ";" in unit.text)
    if isinstance(unit.node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return unit.node.name in tops or _spells(unit, local)
    return _spells(unit, local) or _spells(unit, tops)  # e.g. a class defined under ``if``


def _spells(unit: Unit, local: Collection[str]) -> bool:
    """Whether the code of ``unit`` spells a name of ``local``; a string or a comment that does is no use of it.

    Every name libcst parses (a name, a parameter, a keyword, a definition, an alias) is an identifier
    field of some ``ast`` node: only the units whose text holds the name at all are walked.
    """
    wanted = {name for name in local if name in unit.text}
    return bool(wanted) and any(not wanted.isdisjoint(_identifiers(node)) for node in unit.nodes)


def _identifiers(tree: ast.AST) -> Iterator[str]:
    """Every identifier field under ``tree`` (a superset of the names libcst sees: attributes too)."""
    for node in unordered_walk(tree):
        if isinstance(node, ast.Constant):
            continue  # its value is text, not a name
        for _, value in ast.iter_fields(node):
            if isinstance(value, str):
                yield value
            elif isinstance(value, list):
                yield from (item for item in value if isinstance(item, str))


def _footer(text: str, style: Style) -> str:
    """The module footer as libcst prints it (its round trip loses blank lines there, so ours does too)."""
    if not text:
        return ""
    lines = cst.parse_module("pass" + style.newline + text).footer
    return (
        cst.Module(body=[], header=lines, default_indent=style.indent, default_newline=style.newline).code
        if lines
        else ""
    )


def _parse(unit: Unit, style: Style) -> cst.BaseStatement:
    probe = f"if 1:{style.newline}{style.indent}pass{style.newline}pass{style.newline}"
    module = cst.parse_module(probe + unit.text)
    if len(module.body) != 3 or module.footer:
        raise ValueError(f"libcst parsed {len(module.body) - 2} statements in a unit: {unit.text[:60]!r}")
    return module.body[2]
