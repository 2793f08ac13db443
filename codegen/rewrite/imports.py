"""Module-level edits: drop npudsl imports nothing uses, add the target's imports, create events once."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

import attrs
import libcst as cst
import libcst.matchers as m

from codegen.frontend.collect import NpudslNames
from codegen.lower.plan import ModulePlan
from codegen.rewrite.added import added_text, event_lines
from codegen.rewrite.astnames import names_read
from codegen.rewrite.import_order import place_imports
from codegen.rewrite.returns import local_names
from codegen.rewrite.segments import Statement, Style, Unit
from codegen.targets.base import Spelling

__all__ = ["finish_module"]

_DOCSTRING = m.SimpleStatementLine(body=[m.Expr(m.SimpleString() | m.ConcatenatedString())])


def finish_module(
    body: list[Statement],
    plan: ModulePlan,
    spelling: Spelling,
    names: NpudslNames,
    style: Style,
    parse: Callable[[Unit], cst.BaseStatement],
) -> str:
    """The text of the module's statements: unused npudsl imports dropped, the imports, helpers and events
    the spelled code uses added after the import block.

    A statement left unparsed spells no npudsl name, and is an import line only if it holds no ``;``
    (``codegen.rewrite.splice`` parses every other one, or rewrites it on its text).
    """
    printed = [None if stmt.unit.imports else stmt.code(style) for stmt in body]
    body, printed = _drop_unused_npudsl(body, printed, names, parse)
    texts = [stmt.code(style) if text is None else text for stmt, text in zip(body, printed)]
    events = event_lines(plan, spelling)
    existing = {text.strip() for stmt, text in zip(body, texts) if stmt.unit.imports}
    wanted = [line for line in _imports(plan, spelling) if line not in existing]
    texts, at = place_imports(texts, _import_block(body), wanted, style.newline)
    added = added_text(events, spelling, bool(at), style.indent, style.newline)
    return "".join([*texts[:at], _newlines(added, style.newline), *texts[at:]])


def _newlines(text: str, newline: str) -> str:
    """Generated text in the file's newline (the lines inside a helper's docstring too)."""
    return text if newline == "\n" else re.sub(r"\r?\n", newline, text)


def _imports(plan: ModulePlan, spelling: Spelling) -> list[str]:
    lines = [*spelling.import_lines(), *plan.imports]
    by_source: dict[str, list[str]] = {}
    for event in plan.events:
        if event.source is not None and spelling.events_are_variables:
            by_source.setdefault(event.source, []).append(event.var)
    lines += [f"from {source} import {', '.join(sorted(vars_))}" for source, vars_ in by_source.items()]
    return lines


def _import_block(body: list[Statement]) -> range:
    """The statements of the leading import block, after the docstring."""
    start = 1 if body and _docstring(body[0]) else 0
    last = start
    for i, stmt in enumerate(body[start:], start=start):
        if stmt.unit.imports:
            last = i + 1
        elif not isinstance(stmt.unit.node, (ast.If, ast.Try)):
            break
    return range(start, last)


def _docstring(stmt: Statement) -> bool:
    """A lone string: parsed, as libcst matches it; unparsed, as its ``ast`` shows (see ``Unit.docstring``)."""
    if stmt.node is not None:
        return m.matches(stmt.node, _DOCSTRING)
    return bool(stmt.unit.docstring)


def _drop_unused_npudsl(
    body: list[Statement], printed: list[str | None], names: NpudslNames, parse: Callable[[Unit], cst.BaseStatement]
) -> tuple[list[Statement], list[str | None]]:
    """The statements (and their printed text, None for imports) without the npudsl imports nothing uses; an
    import line left unparsed is parsed (``parse``) only when some of its names go and others stay.

    A name is used when a parsed statement reads it; a statement whose text spells none of the names
    still in doubt cannot, so only the others are walked.
    """
    local = set(names.aliases) | set(names.modules)
    if not local:
        return body, printed
    unused = local - _used(body, printed, local)
    out: list[tuple[Statement, str | None]] = []
    for stmt, text in zip(body, printed):
        if stmt.unit.imports and stmt.node is None and stmt.text is None:
            kept = _kept(stmt.unit.nodes, unused)
            if kept is False:
                continue
            stmt = stmt if kept else attrs.evolve(stmt, node=parse(stmt.unit))
        if stmt.unit.imports and stmt.node is not None:
            trimmed = _trim_line(stmt.node, unused)
            if trimmed is None:
                continue
            stmt = attrs.evolve(stmt, node=trimmed)
        out.append((stmt, text))
    return [stmt for stmt, _ in out], [text for _, text in out]


def _used(body: list[Statement], printed: list[str | None], local: set[str]) -> set[str]:
    """The names of ``local`` that some statement reads (only statements whose text spells one still in doubt
    are walked)."""
    used: set[str] = set()
    for stmt, text in zip(body, printed):
        if stmt.node is not None and text is not None and any(name in text for name in local - used):
            used |= local_names(stmt.node)
        elif stmt.text is not None and any(name in stmt.text for name in local - used):
            used |= names_read(ast.parse(stmt.text))  # the text rewrite's statement: the names libcst would see
    return used


def _kept(nodes: tuple[ast.stmt, ...], unused: set[str]) -> bool | None:
    """Whether an import line without ``;`` stays as it is (True) or goes (False), as :func:`_trim_line` would
    decide, told from its ``ast``; None when libcst must trim it (some names go, or an ``import`` names npudsl:
    libcst reads its dotted name as spelled)."""
    if any(isinstance(n, ast.Import) and any(a.name.startswith("npudsl") for a in n.names) for n in nodes):
        return None
    gone = [_gone(node, unused) for node in nodes]
    if not any(gone):
        return True
    if all(g == len(node.names) for g, node in zip(gone, nodes)):  # type: ignore[attr-defined]
        return False
    return None


def _gone(node: ast.stmt, unused: set[str]) -> int:
    """How many names of ``node`` (an import naming no npudsl module) :func:`_trim_import` drops."""
    module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
    if not isinstance(node, ast.ImportFrom) or node.level or node.names[0].name == "*":
        return 0
    if not (module == "npudsl" or (module.startswith("npudsl.") and module.count(".") == 1)):
        return 0
    return sum((a.asname or a.name) in unused for a in node.names)


def _trim_line(stmt: cst.BaseStatement, unused: set[str]) -> cst.BaseStatement | None:
    assert isinstance(stmt, cst.SimpleStatementLine)
    small: list[cst.BaseSmallStatement] = []
    for node in stmt.body:
        trimmed = _trim_import(node, unused)  # type: ignore[arg-type]
        if trimmed is not None:
            small.append(trimmed)
    if not small:
        return None
    small[-1] = small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return stmt.with_changes(body=small)


def _trim_import(node: cst.Import | cst.ImportFrom, unused: set[str]) -> cst.BaseSmallStatement | None:
    is_npudsl = isinstance(node, cst.Import) or (
        m.matches(node, m.ImportFrom(module=m.Name("npudsl") | m.Attribute(value=m.Name("npudsl"))))
        and not node.relative
    )
    if not is_npudsl or isinstance(node.names, cst.ImportStar):
        return node
    aliases = [a for a in node.names if _local(a) not in unused or not _is_npudsl_alias(node, a)]
    if len(aliases) == len(node.names):
        return node
    if not aliases:
        return None
    aliases[-1] = aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(names=aliases)


def _local(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return alias.asname.name.value  # type: ignore[union-attr]
    return cst.Module([]).code_for_node(alias.name).split(".")[0]


def _is_npudsl_alias(node: cst.Import | cst.ImportFrom, alias: cst.ImportAlias) -> bool:
    return isinstance(node, cst.ImportFrom) or cst.Module([]).code_for_node(alias.name) == "npudsl"
