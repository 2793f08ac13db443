"""Stage 0: give a call buried in an expression a statement of its own, so that it may move up; undone where
it does not.

Real modeling code often calls a branch inside the statement that joins it:
``hidden_states = hidden_states + self.shared_experts(residuals)`` (DeepSeek,
GLM-4-MoE, dots.llm1). Only a statement that holds nothing but its call may move
(:mod:`npudsl.suggest.hoist`), so before the file is captured each such
statement becomes two on the same place: ``shared_experts_out =
self.shared_experts(residuals)`` and ``hidden_states = hidden_states +
shared_experts_out``. Python evaluates the two exactly as the one (the other
operand is a bare name, read after the call either way), so the graph is the
same. The split is kept only for the calls the plan moves: :meth:`Splits.undo`
puts the others back as they were, so the proposal touches nothing else.

Line numbers: each split adds one line; :meth:`Splits.original` maps a line of
the split source back to the file's own.
"""

from __future__ import annotations

import attrs
import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

__all__ = ["Split", "Splits", "fresh_name", "split_calls"]

_SELF_CALL = m.Call(
    func=m.Attribute(value=m.Name("self"), attr=m.Name()),
    args=[m.ZeroOrMore(m.Arg(value=m.Name(), keyword=None, star=""))],
)


@attrs.frozen(kw_only=True)
class Split:
    line: int  # the statement's line in the file (and of its call statement in the split source)
    call: str  # ``shared_experts_out = self.shared_experts(residuals)``
    rest: str  # ``hidden_states = hidden_states + shared_experts_out``
    whole: str  # the statement as the file has it


@attrs.frozen(kw_only=True)
class Splits:
    source: str  # the file with every split made
    splits: tuple[Split, ...]  # by line in the split source

    def original(self, line: int) -> int:
        """The file's line for ``line`` of the split source (a rest line maps to its statement's line)."""
        added = sum(1 for at in self._rest_lines() if at <= line)
        return line - added

    def _rest_lines(self) -> list[int]:
        return [split.line + k + 1 for k, split in enumerate(self.splits)]

    def undo(self, text: str, kept: set[int]) -> str:
        """``text`` (the split source, edited) with every split not at a line in ``kept`` (split-source lines)
        joined back into its original statement."""
        for k, split in enumerate(self.splits):
            if split.line + k in kept:
                continue
            text = _join(text, split)
        return text


def _join(text: str, split: Split) -> str:
    lines = text.splitlines(keepends=True)
    for i in range(len(lines) - 1):
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        if lines[i].strip() == split.call and lines[i + 1].strip() == split.rest:
            lines[i : i + 2] = [indent + split.whole + "\n"]
            return "".join(lines)
    return text


def fresh_name(name: str, taken: set[str]) -> str:
    """``name``, with ``_`` appended until no name in ``taken`` is the same; then taken too."""
    while name in taken:
        name += "_"
    taken.add(name)
    return name


class _Find(cst.CSTVisitor):
    """Single-line ``target = name <op> self.f(names)`` (or the call first, or ``return ...``) statements inside
    functions."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[int, cst.SimpleStatementLine, cst.Call]] = []
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        span = self.get_metadata(PositionProvider, node)
        if self.depth and len(node.body) == 1 and span.start.line == span.end.line:
            call = _buried_call(node.body[0])
            if call is not None:
                self.found.append((span.start.line, node, call))


def _buried_call(statement: cst.BaseSmallStatement) -> cst.Call | None:
    if not m.matches(
        statement,
        m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.BinaryOperation())
        | m.Return(value=m.BinaryOperation()),
    ):
        return None
    value = statement.value  # type: ignore[attr-defined]
    for call, other in ((value.right, value.left), (value.left, value.right)):
        if m.matches(call, _SELF_CALL) and m.matches(other, m.Name()):
            return call
    return None


def split_calls(source: str) -> Splits:
    """``source`` with each buried self-call given its own statement (see the module's docstring); unchanged when
    it does not parse (importing it then says where)."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except cst.ParserSyntaxError:
        return Splits(source=source, splits=())
    finder = _Find()
    wrapper.visit(finder)
    taken = {n.value for n in m.findall(wrapper.module, m.Name()) if isinstance(n, cst.Name)}
    lines = source.splitlines(keepends=True)
    splits: list[Split] = []
    for line, node, call in reversed(finder.found):
        code = cst.Module([]).code_for_node
        name = fresh_name(f"{call.func.attr.value.lstrip('_')}_out", taken)  # type: ignore[attr-defined]
        rest = node.body[0].with_changes(value=node.body[0].value.deep_replace(call, cst.Name(name)))  # type: ignore
        indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
        split = Split(line=line, call=f"{name} = {code(call)}", rest=code(rest), whole=lines[line - 1].strip())
        lines[line - 1 : line] = [f"{indent}{split.call}\n", f"{indent}{split.rest}\n"]
        splits.insert(0, split)
    return Splits(source="".join(lines), splits=tuple(splits))
