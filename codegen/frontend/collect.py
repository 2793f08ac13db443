"""Collect: the npudsl decorators of one module -> IR, with positioned diagnostics.

Works on the standard ``ast`` (it carries every position for free); the libcst
rewrite finds each function's IR again by its qualified name. Which decorators
are npudsl's is :mod:`codegen.frontend.names.resolve`'s decision (the run index and the
rewriter ask it too). A decorated class and its ``forward`` are one function:
their decorators merge, as they do in eager mode.
"""

from __future__ import annotations

import ast
import weakref

import attrs

from codegen.check.diagnostics import Diagnostic
from codegen.frontend import decorator_args, signature
from codegen.frontend.ir import ModuleIR, StreamFunction
from codegen.frontend.names.resolve import DECORATORS, NpudslNames, resolve
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.index.children import children
from npudsl import codes, schedule
from npudsl._registry import Twice
from npudsl.schedule import Loc, Schedule

__all__ = ["DECORATORS", "Collection", "NpudslNames", "collect", "npudsl_names"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class Collection:
    ir: ModuleIR
    names: NpudslNames
    diagnostics: tuple[Diagnostic, ...]


def npudsl_names(tree: ast.Module, source: str | None = None) -> NpudslNames:
    """How ``tree`` spells npudsl (``source``, when given, lets the resolver skip looking for ``:=``)."""
    return resolve(tree, walrus=source is None or ":=" in source)


_COLLECTED: weakref.WeakKeyDictionary[ast.Module, Collection] = weakref.WeakKeyDictionary()


def collect(tree: ast.Module, source: str, *, path: str, module_name: str) -> Collection:
    """The module's IR and diagnostics, collected once per tree: the run index and the transform both ask
    (under another path and name: only the diagnostics and the module's IR carry them)."""
    found = _COLLECTED.get(tree)
    if found is None:
        found = _COLLECTED[tree] = _collect(tree, source, path=path, module_name=module_name)
    if (found.ir.path, found.ir.module_name) == (path, module_name):
        return found
    return attrs.evolve(
        found,
        ir=attrs.evolve(found.ir, path=path, module_name=module_name),
        diagnostics=tuple(attrs.evolve(d, path=path) for d in found.diagnostics),
    )


def _collect(tree: ast.Module, source: str, *, path: str, module_name: str) -> Collection:
    names = npudsl_names(tree, source)
    builder = _Builder(names=names, positions=Positions(source), path=path, yields="yield" in source)
    for problem in names.problems:
        builder.error(problem.node, codes.UNRESOLVED, problem.message, problem.hint)
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
    yields: bool = True  # the source spells ``yield`` (else no function of it is a generator)
    functions: list[StreamFunction] = attrs.Factory(list)
    diagnostics: list[Diagnostic] = attrs.Factory(list)
    _seen: set[int] = attrs.Factory(set)

    def _ours(self, decorators: list[ast.expr]) -> list[tuple[str, ast.expr]]:
        found = [(self.names.decorator(d), d) for d in decorators]
        self._seen.update(id(d) for name, d in found if name)
        return [(name, d) for name, d in found if name]

    def error(self, node: ast.AST, code: str, message: str, hint: str) -> None:
        loc = self.positions.loc(node)
        self.diagnostics.append(
            Diagnostic(path=self.path, line=loc.line, col=loc.col, code=code, message=message, hint=hint)
        )

    def visit_class(self, node: ast.ClassDef) -> None:
        ours = self._ours(node.decorator_list)
        forward = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
        if ours and forward is None:
            self.error(
                ours[0][1],
                codes.BAD_PLACE,
                f"class {node.name} is decorated but defines no forward",
                "decorate an nn.Module subclass that defines forward, or decorate the method itself",
            )
            ours = []
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.visit_function(item, owner=node, inherited=ours if item is forward else [])

    def visit_function(
        self, node: _Function, *, owner: ast.ClassDef | None, inherited: list[tuple[str, ast.expr]] | None = None
    ) -> None:
        """``inherited``: the decorators of the class, when ``node`` is its ``forward``."""
        ours = [*(inherited or []), *self._ours(node.decorator_list)]
        if not ours:
            return
        if isinstance(node, ast.AsyncFunctionDef) or (self.yields and _is_generator(node)):
            kind = "an async function" if isinstance(node, ast.AsyncFunctionDef) else "a generator"
            self.error(
                ours[0][1],
                codes.BAD_PLACE,
                f"@{ours[0][0]} cannot decorate {kind}",
                "stream code must return its tensors; move the decorated work into a plain function",
            )
            return
        self._build(ours, node, owner=owner, class_level=bool(inherited))

    def _build(
        self, ours: list[tuple[str, ast.expr]], fn: ast.FunctionDef, *, owner: ast.ClassDef | None, class_level: bool
    ) -> None:
        said: Schedule[Loc] = Schedule()
        scope = decorator_args.Scope(names=self.names, cls=owner)
        for decorator, node in ours:
            spec, problems = decorator_args.parse(decorator, node, self.positions, self.path, scope)
            self.diagnostics.extend(problems)
            if spec is not None:
                said = self._add(said, decorator, spec, node)
        method = owner is not None
        self.functions.append(
            StreamFunction(
                owner=owner.name if owner else None,
                name=fn.name,
                loc=self.positions.loc(ours[0][1]),
                class_level=class_level,
                inputs=signature.tensor_inputs(fn, method=method),
                required_inputs=signature.required_tensor_inputs(fn, method=method),
                returns_value=signature.returns_value(fn),
                params=scan.params_of(fn),
                **attrs.asdict(said, recurse=False),
            )
        )

    def _add(self, said: Schedule[Loc], decorator: str, spec: object, node: ast.expr) -> Schedule[Loc]:
        """``said`` with ``spec``, written below what it holds (decorators are read from the top)."""
        try:
            return schedule.DECORATORS[decorator].add(said, spec, outer=False)
        except Twice:
            self.error(
                node,
                codes.TWICE,
                f"@{decorator} appears twice on one function",
                f"keep one @{decorator} (on the class or on its forward); its arguments say everything",
            )
            return said

    def reject_nested(self, tree: ast.Module) -> None:
        """Decorators anywhere but on top-level classes, their methods and module functions."""
        for node in scan.statements_breadth_first(tree):
            for decorator in getattr(node, "decorator_list", ()):
                name = self.names.decorator(decorator)
                if name and id(decorator) not in self._seen:
                    self.error(
                        decorator,
                        codes.BAD_PLACE,
                        f"@{name} on a nested function or class",
                        "decorate module-level functions, methods of module-level classes, or classes",
                    )


def _is_generator(fn: _Function) -> bool:
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(children(node))
    return False
