"""The libcst transformer that applies a module's plan to top-level statements: functions, call-site joins."""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from codegen.frontend.collect import NpudslNames
from codegen.lower.plan import ModulePlan
from codegen.rewrite.build import statements
from codegen.rewrite.callsites import apply_caller_plan
from codegen.rewrite.function import rewrite_body
from codegen.targets.base import Spelling

__all__ = ["ModuleRewriter", "constructing", "init_text", "is_npudsl_decorator"]


def is_npudsl_decorator(decorator: cst.Decorator, names: NpudslNames) -> bool:
    return names.strips(decorator)  # codegen.frontend.names.resolve decides, for the collector and the index too


class ModuleRewriter(cst.CSTTransformer):
    def __init__(
        self,
        plan: ModulePlan,
        spelling: Spelling,
        names: NpudslNames,
        functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    ) -> None:
        super().__init__()
        self.plan = plan
        self.spelling = spelling
        self.names = names
        self.functions = functions  # the ``ast`` of each top-level function and method, by qualname
        self._scopes: list[str] = []  # enclosing class and function names
        self._planned = {*plan.functions, *plan.callers}
        self._constructing = constructing(plan)

    def _descend(self, node: cst.FunctionDef | cst.ClassDef) -> bool:
        """Whether anything inside ``node`` can change: a planned function, or a decorated method to strip.

        Decorators anywhere else are errors (collect's NPD108), so no rewrite reaches them.
        """
        prefix = ".".join(self._scopes) + "."
        if any(name.startswith(prefix) for name in self._planned):
            return True
        return (
            isinstance(node, cst.ClassDef)
            and isinstance(node.body, cst.IndentedBlock)
            and any(
                isinstance(item, cst.FunctionDef) and any(is_npudsl_decorator(d, self.names) for d in item.decorators)
                for item in node.body.body
            )
        )

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return False  # holds no function or class: nothing to rewrite, and the node stays as parsed

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._scopes.append(node.name.value)
        return self._descend(node)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        qualname = ".".join(self._scopes)
        self._scopes.pop()
        if qualname in self._constructing and self._needs_init(updated):
            updated = _with_init(updated, self.spelling.construct_lines())
        return self._strip(updated)

    def _needs_init(self, node: cst.ClassDef) -> bool:
        """A class that syncs, defines no ``__init__`` and inherits none from a class of this module that
        syncs: its streams must still be made when it is built (before any compiled region runs)."""
        if not self.spelling.construct_lines() or not isinstance(node.body, cst.IndentedBlock):
            return False
        if any(m.matches(item, m.FunctionDef(name=m.Name("__init__"))) for item in node.body.body):
            return False
        if not all(is_npudsl_decorator(d, self.names) for d in node.decorators):
            return False  # a class decorator (a dataclass) may write the __init__: streams are made on first use
        return not any(
            m.matches(base.value, m.Name()) and base.value.value in self._constructing for base in node.bases
        )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._scopes.append(node.name.value)
        return self._descend(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        qualname = ".".join(self._scopes)
        self._scopes.pop()
        caller = self.plan.callers.get(qualname)
        if caller is not None:
            updated = apply_caller_plan(updated, self.functions[qualname], caller, self.spelling)
        plan = self.plan.functions.get(qualname)
        if plan is not None:
            updated = rewrite_body(updated, plan, self.spelling)
        if qualname.endswith(".__init__") and qualname.split(".")[0] in self._constructing:
            updated = _ending_with(updated, statements(self.spelling.construct_lines()))
        return self._strip(updated)

    def _strip(self, node: cst.FunctionDef | cst.ClassDef) -> cst.FunctionDef | cst.ClassDef:
        """Drop npudsl decorators, keeping the comments above them and on their lines."""
        kept: list[cst.Decorator] = []
        moved: list[cst.EmptyLine] = []
        for decorator in node.decorators:
            if is_npudsl_decorator(decorator, self.names):
                moved.extend([*decorator.leading_lines, *_line_comment(decorator)])
            else:
                kept.append(
                    decorator.with_changes(leading_lines=[*moved, *decorator.leading_lines]) if moved else decorator
                )
                moved = []
        if len(kept) == len(node.decorators):
            return node
        if not kept:
            return node.with_changes(decorators=kept, leading_lines=[*node.leading_lines, *moved])
        return node.with_changes(decorators=kept, lines_after_decorators=[*moved, *node.lines_after_decorators])


def _line_comment(decorator: cst.Decorator) -> list[cst.EmptyLine]:
    """The comment at the end of a decorator's line, as a line of its own."""
    comment = decorator.trailing_whitespace.comment
    return [cst.EmptyLine(comment=comment)] if comment is not None else []


def constructing(plan: ModulePlan) -> set[str]:
    """The classes whose methods spell a stream or an event: their streams are made when they are built."""
    spelled = [q for q, c in plan.callers.items() if c.wraps or c.start or any(c.steps.values())]
    spelled += [q for q, f in plan.functions.items() if f.prologue or f.epilogue]
    return {q.split(".")[0] for q in spelled if "." in q}


_INIT = """def __init__(self, *args, **kwargs) -> None:
    super().__init__(*args, **kwargs)
"""


def init_text(lines: list[str]) -> str:
    """The ``__init__`` a syncing class without one gets: everything to its base's, then ``lines``."""
    return _INIT + "".join(f"    {line}\n" for line in lines)


def _with_init(node: cst.ClassDef, lines: list[str]) -> cst.ClassDef:
    """``node`` with an ``__init__`` that passes everything to its base's and then runs ``lines``, placed
    after the class docstring and the class-level assignments."""
    assert isinstance(node.body, cst.IndentedBlock)
    init = cst.ensure_type(cst.parse_statement(init_text(lines)), cst.FunctionDef)
    body = list(node.body.body)
    at = next((i for i, item in enumerate(body) if not isinstance(item, cst.SimpleStatementLine)), len(body))
    init = init.with_changes(leading_lines=[cst.EmptyLine(indent=False)] if at else [])
    if at < len(body):
        body[at] = body[at].with_changes(
            leading_lines=[cst.EmptyLine(indent=False), *_without_blank(body[at].leading_lines)]
        )
    return node.with_changes(body=node.body.with_changes(body=[*body[:at], init, *body[at:]]))


def _without_blank(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    return list(lines) if any(line.comment for line in lines) else []


def _ending_with(node: cst.FunctionDef, lines: list[cst.BaseStatement]) -> cst.FunctionDef:
    if not lines or not isinstance(node.body, cst.IndentedBlock):
        return node
    return node.with_changes(body=node.body.with_changes(body=[*node.body.body, *lines]))
