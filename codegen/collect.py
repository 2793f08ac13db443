"""Collect: the npudsl decorators of one module -> IR, with positioned diagnostics.

Works on the standard ``ast`` (it carries every position for free); the libcst
rewrite finds each function's IR again by its qualified name.
"""

from __future__ import annotations

import ast

import attrs

from codegen import decorator_args, scan, signature
from codegen.diagnostics import Diagnostic
from codegen.ir import ModuleIR, StreamFunction
from codegen.positions import Positions

__all__ = ["Collection", "NpudslNames", "collect"]

DECORATORS = frozenset({"on_stream", "after", "records", "core_limit", "keep_output"})
_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class NpudslNames:
    """How this module spells the decorators: ``from npudsl import x as y`` and ``import npudsl as m``."""

    aliases: dict[str, str]  # local name -> decorator
    modules: frozenset[str]  # local names bound to the npudsl package

    def decorator(self, node: ast.expr) -> str | None:
        target = node.func if isinstance(node, ast.Call) else node
        if isinstance(target, ast.Name):
            return self.aliases.get(target.id)
        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id in self.modules and target.attr in DECORATORS):
            return target.attr
        return None


@attrs.frozen(kw_only=True)
class Collection:
    ir: ModuleIR
    names: NpudslNames
    diagnostics: tuple[Diagnostic, ...]


def npudsl_names(tree: ast.Module) -> NpudslNames:
    aliases: dict[str, str] = {}
    modules: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in ("npudsl", "npudsl.decorators") and not node.level:
            aliases.update({a.asname or a.name: a.name for a in node.names if a.name in DECORATORS})
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name == "npudsl")
    return NpudslNames(aliases=aliases, modules=frozenset(modules))


def collect(tree: ast.Module, source: str, *, path: str, module_name: str) -> Collection:
    names = npudsl_names(tree)
    builder = _Builder(names=names, positions=Positions(source), path=path)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            builder.visit_class(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            builder.visit_function(node, owner=None)
    builder.reject_nested(tree)
    ir = ModuleIR(path=path, module_name=module_name, functions=tuple(builder.functions))
    return Collection(ir=ir, names=names, diagnostics=tuple(builder.diagnostics))


@attrs.define(eq=False)
class _Builder:
    names: NpudslNames
    positions: Positions
    path: str
    functions: list[StreamFunction] = attrs.Factory(list)
    diagnostics: list[Diagnostic] = attrs.Factory(list)
    _seen: set[int] = attrs.Factory(set)

    def _ours(self, decorators: list[ast.expr]) -> list[tuple[str, ast.expr]]:
        found = [(self.names.decorator(d), d) for d in decorators]
        self._seen.update(id(d) for name, d in found if name)
        return [(name, d) for name, d in found if name]

    def _error(self, node: ast.AST, code: str, message: str, hint: str) -> None:
        loc = self.positions.loc(node)
        self.diagnostics.append(Diagnostic(path=self.path, line=loc.line, col=loc.col,
                                           code=code, message=message, hint=hint))

    def visit_class(self, node: ast.ClassDef) -> None:
        ours = self._ours(node.decorator_list)
        if ours and not any(isinstance(f, ast.FunctionDef) and f.name == "forward" for f in node.body):
            self._error(ours[0][1], "NPD108", f"class {node.name} is decorated but defines no forward",
                        "decorate an nn.Module subclass that defines forward, or decorate the method itself")
            ours = []
        if ours:
            forward = next(f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "forward")
            self._build(ours, forward, owner=node.name, class_level=True)
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.visit_function(item, owner=node.name)

    def visit_function(self, node: _Function, *, owner: str | None) -> None:
        ours = self._ours(node.decorator_list)
        if not ours:
            return
        if isinstance(node, ast.AsyncFunctionDef) or _is_generator(node):
            kind = "an async function" if isinstance(node, ast.AsyncFunctionDef) else "a generator"
            self._error(ours[0][1], "NPD108", f"@{ours[0][0]} cannot decorate {kind}",
                        "stream code must return its tensors; move the decorated work into a plain function")
            return
        self._build(ours, node, owner=owner, class_level=False)

    def _build(self, ours: list[tuple[str, ast.expr]], fn: ast.FunctionDef, *, owner: str | None,
               class_level: bool) -> None:
        fields: dict[str, object] = {}
        for decorator, node in ours:
            result, problems = decorator_args.parse(decorator, node, self.positions, self.path)
            self.diagnostics.extend(problems)
            if result is not None:
                self._merge(fields, decorator, result, node)
        first = self.positions.loc(ours[0][1])
        self.functions.append(StreamFunction(owner=owner, name=fn.name, loc=first, class_level=class_level,
                                             inputs=signature.tensor_inputs(fn, method=owner is not None),
                                             required_inputs=signature.required_tensor_inputs(
                                                 fn, method=owner is not None),
                                             returns_value=signature.returns_value(fn), **fields))

    def _merge(self, fields: dict[str, object], decorator: str, result: object, node: ast.expr) -> None:
        key = {"on_stream": "stream", "after": "waits", "records": "records",
               "core_limit": "core_limit", "keep_output": "keep_output"}[decorator]
        if key in ("waits", "records"):
            fields[key] = (*fields.get(key, ()), result)  # type: ignore[misc]
        elif key in fields:
            self._error(node, "NPD107", f"@{decorator} appears twice on one function",
                        f"keep one @{decorator}; its arguments say everything")
        else:
            fields[key] = result

    def reject_nested(self, tree: ast.Module) -> None:
        """Decorators anywhere but on top-level classes, their methods and module functions."""
        for node in scan.statements_breadth_first(tree):
            for decorator in getattr(node, "decorator_list", ()):
                name = self.names.decorator(decorator)
                if name and id(decorator) not in self._seen:
                    self._error(decorator, "NPD108", f"@{name} on a nested function or class",
                                "decorate module-level functions, methods of module-level classes, or classes")


def _is_generator(fn: _Function) -> bool:
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return False

