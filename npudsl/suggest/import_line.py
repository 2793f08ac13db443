"""The one import a suggestion adds: ``from npudsl import on_stream``.

It joins an existing ``from npudsl import ...`` (names kept sorted) or starts a
line of its own after the module's docstring and leading imports, with the
blank lines a formatter would leave; a star import or the name already there
adds nothing.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

__all__ = ["with_on_stream_import"]

_NPUDSL_FROM = m.ImportFrom(module=m.Name("npudsl"), relative=[])


def with_on_stream_import(module: cst.Module) -> cst.Module:
    """``module`` importing ``on_stream`` from npudsl: joined to its ``from npudsl import``, or a line of its own."""
    body = list(module.body)
    for i, statement in enumerate(body):
        if isinstance(statement, cst.SimpleStatementLine) and m.matches(
            statement, m.SimpleStatementLine(body=[_NPUDSL_FROM])
        ):
            node = statement.body[0]
            assert isinstance(node, cst.ImportFrom)  # what _NPUDSL_FROM matches
            if isinstance(node.names, cst.ImportStar) or any(
                m.matches(a, m.ImportAlias(name=m.Name("on_stream"), asname=None)) for a in node.names
            ):
                return module
            names = sorted(
                [*node.names, cst.ImportAlias(name=cst.Name("on_stream"))],
                key=lambda a: cst.Module([]).code_for_node(a.name),
            )
            names = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in names]
            body[i] = statement.with_changes(body=[node.with_changes(names=names)])
            return module.with_changes(body=body)
    return module.with_changes(body=_insert_import(body))


def _insert_import(
    body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement],
) -> list[cst.SimpleStatementLine | cst.BaseCompoundStatement]:
    imports = m.SimpleStatementLine(body=[m.Import() | m.ImportFrom()])
    docstring = m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString() | m.ConcatenatedString())])
    at = 1 if body and m.matches(body[0], docstring) else 0
    while at < len(body) and m.matches(body[at], imports):
        at += 1
    line = cst.parse_statement("from npudsl import on_stream\n")
    line = line.with_changes(leading_lines=[cst.EmptyLine()] if at else [])
    if at < len(body) and not body[at].leading_lines:
        body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine()])
    return [*body[:at], line, *body[at:]]
