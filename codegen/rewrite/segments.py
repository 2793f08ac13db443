"""A module's source cut into its top-level statements as libcst owns the lines, from the ``ast`` already parsed.

libcst gives the lines above the first statement to the module header, and the blank and
comment lines above any other statement to that statement. A compound statement also owns
the blank and comment lines right below it, up to the last comment indented at least as
deep as its last block; the lines after the last statement that it does not own are the
module footer.

``ast`` makes one statement of each part of ``a = 1; b = 2``; libcst makes one line of
them, as of parts joined by a backslash continuation. :func:`layout` groups them alike.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import attrs
import libcst as cst

from codegen.rewrite.printing import module_code
from codegen.rewrite.textlines import split_lines

__all__ = ["Layout", "Statement", "Style", "Unit", "first_line", "layout", "owned_below"]

_SPACE = " \t\f"


@attrs.frozen
class Unit:
    """One libcst top-level statement: its text (the lines it owns) and its ``ast`` statements."""

    text: str
    nodes: tuple[ast.stmt, ...]
    first: int = 0  # the number of its first line in the module

    @property
    def node(self) -> ast.stmt:
        return self.nodes[0]

    @property
    def docstring(self) -> bool | None:
        """Whether libcst sees a lone string (a docstring) here; None when only libcst can tell (``ast`` makes
        one ``JoinedStr`` of ``f"a"`` and of ``"a" f"b"``, and only the second is a string to libcst)."""
        value = self.node.value if len(self.nodes) == 1 and isinstance(self.node, ast.Expr) else None
        if isinstance(value, ast.JoinedStr):
            return None
        return isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes))

    @property
    def imports(self) -> bool:
        """A line holding imports and nothing else."""
        return all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in self.nodes)


@attrs.frozen
class Layout:
    """``header + "".join(unit.text for unit in units) + footer`` is the source."""

    header: str
    units: tuple[Unit, ...]
    footer: str
    lines: list[str] = attrs.field(factory=list, eq=False)  # the module's lines, each with its line end


@attrs.frozen
class Style:
    """The module's default indentation and newline, which libcst prints parsed and generated nodes with."""

    indent: str
    newline: str

    def code(self, nodes: Sequence[cst.BaseStatement]) -> str:
        """The text of top-level ``nodes``, as the module would print them."""
        if not nodes:
            return ""
        return module_code(nodes, indent=self.indent, newline=self.newline)


@attrs.frozen
class Statement:
    """A top-level statement of the output: its unit of source, and its libcst node if it was parsed, or its new
    text if the text rewrite (``codegen.rewrite.textunit``) made it."""

    unit: Unit
    node: cst.BaseStatement | None = None
    text: str | None = None

    def code(self, style: Style) -> str:
        if self.text is not None:
            return self.text
        return self.unit.text if self.node is None else style.code([self.node])


def layout(source: str, tree: ast.Module) -> Layout:
    """The top-level statements of ``source`` (``tree`` is its ``ast``), each with the lines libcst gives it."""
    lines = split_lines(source)
    groups = _groups(tree.body, lines)
    start = groups[0][0] if groups else len(lines) + 1
    header = "".join(lines[: start - 1])
    units = []
    for _, last, nodes in groups:
        end = last + owned_below(nodes[-1], lines, last)
        units.append(Unit(text="".join(lines[start - 1 : end]), nodes=tuple(nodes), first=start))
        start = end + 1
    return Layout(header=header, units=tuple(units), footer="".join(lines[start - 1 :]), lines=lines)


def first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def _groups(body: Sequence[ast.stmt], lines: list[str]) -> list[tuple[int, int, list[ast.stmt]]]:
    """(first line, last line, ``ast`` statements) of each libcst statement."""
    groups: list[tuple[int, int, list[ast.stmt]]] = []
    for node in body:
        first, last = first_line(node), node.end_lineno or node.lineno
        if groups and (first <= groups[-1][1] or _continued(groups[-1][2][-1], lines)):
            groups[-1][2].append(node)
            groups[-1] = (groups[-1][0], max(last, groups[-1][1]), groups[-1][2])
        else:
            groups.append((first, last, [node]))
    return groups


def _continued(node: ast.stmt, lines: list[str]) -> bool:
    """Whether a backslash continues the line on which ``node`` ends (a comment may end in one too)."""
    line = lines[(node.end_lineno or node.lineno) - 1]
    if not line.rstrip("\r\n").endswith("\\"):
        return False
    tail = line.encode()[node.end_col_offset or 0 :].decode()
    return "#" not in tail


def owned_below(node: ast.stmt, lines: list[str], last: int) -> int:
    """How many lines below ``last`` belong to the last block of ``node``: up to its last indented comment."""
    indent = _last_block_indent(node, lines)
    if indent is None:
        return 0
    owned = 0
    for offset, line in enumerate(lines[last:], start=1):
        text = line.strip()
        if text and not text.startswith("#"):
            break
        if text and line.startswith(indent):
            owned = offset
    return owned


def _last_block_indent(node: ast.stmt, lines: list[str]) -> str | None:
    """The indentation of the block that ends ``node`` (a top-level statement); None when it ends inline."""
    suite = _last_suite(node)
    if not suite:
        return None
    first = suite[0]
    line = lines[first_line(first) - 1]
    indent = line[: len(line) - len(line.lstrip(_SPACE))]
    starts_line = bool(getattr(first, "decorator_list", ())) or first.col_offset == len(indent.encode())
    return indent if starts_line else None


def _last_suite(node: ast.stmt) -> list[ast.stmt]:
    """The statements of the last block of ``node`` in the text ([] for a simple statement)."""
    if isinstance(node, ast.Match):
        return node.cases[-1].body if node.cases else []
    if isinstance(node, (ast.Try, ast.TryStar)):
        return node.finalbody or node.orelse or (node.handlers[-1].body if node.handlers else node.body)
    orelse = getattr(node, "orelse", None)
    if (
        isinstance(node, ast.If) and len(orelse) == 1 and isinstance(orelse[0], ast.If) and orelse[0].col_offset == 0
    ):  # ``elif`` (an ``if`` inside ``else:`` is indented)
        return _last_suite(orelse[0])
    return orelse or getattr(node, "body", [])
