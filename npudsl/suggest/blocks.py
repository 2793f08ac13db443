"""The statements a call's statement may move up past inside its own block, judged on names (libcst + ``ast``).

Only straight-line moves: the call's statement (one simple statement on its own
line or lines, in an indented block of a method) may pass the simple statements
just above it in the same block, nearest first, up to the first compound
statement (``if``, ``for``, ``while``, ``with``, ``try``...), which it never
crosses or enters. It passes one only when neither binds, deletes or changes a
name the other uses, and everything the passed one does shows in the graph
(:mod:`npudsl.suggest.names`). Whether the ops allow it is
:mod:`npudsl.suggest.hoist`'s question.
"""

from __future__ import annotations

import ast

import attrs
import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from npudsl.suggest.names import Facts, Scope, facts, function_visible

__all__ = ["Above", "Scoped", "Source", "Statement"]


@attrs.frozen(kw_only=True)
class Statement:
    first: int
    last: int
    code: str  # without its leading comments
    facts: Facts


@attrs.frozen(kw_only=True)
class Above:
    """A call's statement and the statements just above it that it may pass, nearest first."""

    moved: Statement
    passable: tuple[Statement, ...]
    top: int | None  # last line of the statement above ``passable[-1]``; None: that one opens the block
    stop: str | None = None  # why the statement above ``passable[-1]`` may not be passed; None: the block's top

    def after(self, passed: int) -> int | None:
        """The last line of the statement the moved one follows once it has passed ``passed`` statements."""
        return self.passable[passed].last if passed < len(self.passable) else self.top


class Scoped(cst.CSTVisitor):
    """A visitor that knows the classes and functions it is in (``scope``), with positions."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.scope: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.pop()


class _Blocks(Scoped):
    """Each method's indented blocks: ``"Class.method" -> [[(first, last, statement), ...], ...]``."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[str, list[list[tuple[int, int, cst.BaseStatement]]]] = {}

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if len(self.scope) == 2:  # a method of a module-level class, not a nested function
            spans = [self.get_metadata(PositionProvider, s) for s in node.body]
            block = [(span.start.line, span.end.line, s) for span, s in zip(spans, node.body)]
            self.blocks.setdefault(".".join(self.scope), []).append(block)


@attrs.define(eq=False)
class Source:
    """One parsed model file, asked which statements each call's statement may pass."""

    tree: ast.Module
    blocks: dict[str, list[list[tuple[int, int, cst.BaseStatement]]]]
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
    _visible: dict[str, bool] = attrs.Factory(dict)

    @classmethod
    def parse(cls, source: str) -> Source:
        visitor = _Blocks()
        MetadataWrapper(cst.parse_module(source)).visit(visitor)
        tree = ast.parse(source)
        functions = {
            f"{c.name}.{f.name}": f
            for c in tree.body
            if isinstance(c, ast.ClassDef)
            for f in c.body
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        return cls(tree=tree, blocks=visitor.blocks, functions=functions)

    def visible(self, method: str) -> bool:
        """Everything ``method`` does shows in the graph (see :mod:`npudsl.suggest.names`)."""
        if method not in self._visible:
            function = self.functions.get(method)
            self._visible[method] = function is not None and function_visible(self.tree, function)
        return self._visible[method]

    def above(self, method: str, line: int) -> Above | None:
        """What the statement of ``method`` holding ``line`` may pass; None when it cannot move at all."""
        function = self.functions.get(method)
        if function is None or any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(function)):
            return None
        scope = Scope.of(self.tree, function)
        for block in self.blocks.get(method, []):
            at = next((i for i, (first, last, _) in enumerate(block) if first <= line <= last), None)
            if at is not None and _movable(block[at][2]):
                return _above(block, at, scope)
        return None


def _movable(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], (cst.Assign, cst.AnnAssign, cst.Expr))
        and isinstance(statement.body[0].value, cst.Call)
    )


def _statement(first: int, last: int, node: cst.SimpleStatementLine, scope: Scope) -> Statement:
    code = cst.Module([]).code_for_node(node.with_changes(leading_lines=()))
    return Statement(first=first, last=last, code=code.strip(), facts=facts(code, scope))


def _above(block: list[tuple[int, int, cst.BaseStatement]], at: int, scope: Scope) -> Above | None:
    first, last, node = block[at]
    moved = _statement(first, last, node, scope)  # type: ignore[arg-type]
    if not moved.facts.visible:
        return None
    passable: list[Statement] = []
    stop = None
    for first, last, node in reversed(block[:at]):
        if not isinstance(node, cst.SimpleStatementLine):
            stop = f"line {first} opens a block (if, for, with...), which a call never crosses"
            break
        statement = _statement(first, last, node, scope)
        stop = _stop(statement, moved)
        if stop is not None:
            break
        passable.append(statement)
    start = at - len(passable)
    return Above(moved=moved, passable=tuple(passable), top=block[start - 1][1] if start else None, stop=stop)


def _stop(statement: Statement, moved: Statement) -> str | None:
    """Why ``moved`` may not pass ``statement`` on names alone (``None``: it may)."""
    if not statement.facts.visible:
        return (
            f"line {statement.first} does something the graph cannot see (an attribute or item store, "
            "a property, a call of code outside the model)"
        )
    return (
        f"line {statement.first} binds or changes a name the call uses"
        if statement.facts.conflicts(moved.facts)
        else None
    )
