"""What one Python module defines and imports, read with libcst (never run)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

import attrs
import libcst as cst
import libcst.matchers as m

from npu_contract.model import Param, ParamKind
from npu_contract.pyimports import ImportRef, dotted, imports_of

__all__ = [
    "ClassInfo",
    "FieldInfo",
    "FunctionInfo",
    "ImportRef",
    "ModuleInfo",
    "NO_LITERAL",
    "dotted",
    "parse_module",
    "signature_of",
]

NO_LITERAL = object()  # a value that is not a Python literal


@attrs.frozen(kw_only=True)
class FunctionInfo:
    params: tuple[Param, ...]
    decorators: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class FieldInfo:
    """`self.name = <value>` in `__init__`, or a class-level assignment."""

    callee: str | None
    args: tuple[object, ...] = ()
    literal: object = NO_LITERAL


@attrs.frozen(kw_only=True)
class ClassInfo:
    name: str
    bases: tuple[str, ...]
    methods: dict[str, FunctionInfo]
    fields: dict[str, FieldInfo]
    extra_fields: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class ModuleInfo:
    name: str
    functions: dict[str, FunctionInfo]
    classes: dict[str, ClassInfo]
    imports: dict[str, ImportRef]
    star_imports: tuple[str, ...]
    all_names: tuple[str, ...] | None
    values: frozenset[str]


def _param(p: cst.Param, kind: ParamKind) -> Param:
    return Param(name=p.name.value, kind=kind, has_default=p.default is not None)


def signature_of(params: cst.Parameters) -> tuple[Param, ...]:
    out = [_param(p, ParamKind.POSITIONAL_ONLY) for p in params.posonly_params]
    out += [_param(p, ParamKind.POSITIONAL_OR_KEYWORD) for p in params.params]
    if isinstance(params.star_arg, cst.Param):
        out.append(_param(params.star_arg, ParamKind.VAR_POSITIONAL))
    out += [_param(p, ParamKind.KEYWORD_ONLY) for p in params.kwonly_params]
    if isinstance(params.star_kwarg, cst.Param):
        out.append(_param(params.star_kwarg, ParamKind.VAR_KEYWORD))
    return tuple(out)


def _literal(module: cst.Module, node: cst.BaseExpression) -> object:
    try:
        return ast.literal_eval(module.code_for_node(node))
    except (ValueError, SyntaxError, TypeError):
        return NO_LITERAL


def _function(node: cst.FunctionDef) -> FunctionInfo:
    decos = tuple(dotted(d.decorator) or "" for d in node.decorators)
    return FunctionInfo(params=signature_of(node.params), decorators=decos)


def _statements(body: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """Top-level statements, looking into `if`/`try` blocks (guarded imports)."""
    for stmt in body:
        if isinstance(stmt, cst.If):
            yield from _statements(stmt.body.body)
        elif isinstance(stmt, cst.Try):
            yield from _statements(stmt.body.body)
            for handler in stmt.handlers:
                yield from _statements(handler.body.body)
        elif isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        else:
            yield stmt


_SELF_ATTR = m.Attribute(value=m.Name("self"))
_FIXED_APPEND = m.Call(
    func=m.Attribute(value=m.Attribute(value=m.Name("self"), attr=m.Name("_fixed_attrs")), attr=m.Name("append")),
    args=[m.Arg(value=m.SimpleString())],
)


def _field(module: cst.Module, value: cst.BaseExpression | None) -> FieldInfo:
    if isinstance(value, cst.Call):
        args = tuple(_literal(module, a.value) for a in value.args if a.keyword is None)
        return FieldInfo(callee=dotted(value.func), args=args)
    literal = NO_LITERAL if value is None else _literal(module, value)
    return FieldInfo(callee=None, literal=literal)


def _init_fields(module: cst.Module, init: cst.FunctionDef) -> tuple[dict[str, FieldInfo], tuple[str, ...]]:
    fields: dict[str, FieldInfo] = {}
    for node in m.findall(init, m.Assign() | m.AnnAssign()):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if m.matches(target, _SELF_ATTR) and target.attr.value != "_fixed_attrs":
                fields[target.attr.value] = _field(module, node.value)
    extra = tuple(ast.literal_eval(c.args[0].value.value) for c in m.findall(init, _FIXED_APPEND))
    return fields, extra


def _class_level_fields(module: cst.Module, node: cst.ClassDef) -> dict[str, FieldInfo]:
    fields: dict[str, FieldInfo] = {}
    for stmt in _statements(node.body.body):
        if isinstance(stmt, cst.AnnAssign) and isinstance(stmt.target, cst.Name):
            fields[stmt.target.value] = _field(module, stmt.value)
        elif isinstance(stmt, cst.Assign) and m.matches(stmt.targets[0].target, m.Name()):
            name = stmt.targets[0].target.value
            if not name.isupper():
                fields[name] = _field(module, stmt.value)
    return fields


def _class(module: cst.Module, node: cst.ClassDef) -> ClassInfo:
    bases = tuple(dotted(a.value) or "?" for a in node.bases if a.keyword is None)
    methods, fields, extra = {}, _class_level_fields(module, node), ()
    for stmt in node.body.body:
        if isinstance(stmt, cst.FunctionDef):
            methods[stmt.name.value] = _function(stmt)
            if stmt.name.value == "__init__":
                init_fields, extra = _init_fields(module, stmt)
                fields.update(init_fields)
    return ClassInfo(name=node.name.value, bases=bases, methods=methods, fields=fields, extra_fields=extra)


def _all_names(module: cst.Module, stmt: cst.CSTNode) -> tuple[str, ...] | None:
    if m.matches(stmt, m.Assign(targets=[m.AssignTarget(target=m.Name("__all__"))])):
        value = _literal(module, stmt.value)
        return tuple(value) if isinstance(value, (list, tuple)) else None
    return None


def parse_module(name: str, source: str, *, is_package: bool = False) -> ModuleInfo:
    """The top-level definitions, imports, `__all__` and values of one module."""
    module = cst.parse_module(source)
    functions, classes, imports, stars, values = {}, {}, {}, [], set()
    all_names = None
    for stmt in _statements(module.body):
        if isinstance(stmt, cst.FunctionDef):
            functions[stmt.name.value] = _function(stmt)
        elif isinstance(stmt, cst.ClassDef):
            classes[stmt.name.value] = _class(module, stmt)
        elif isinstance(stmt, (cst.Import, cst.ImportFrom)):
            for local, ref in imports_of(stmt, name, is_package=is_package):
                stars.append(ref.module) if local == "*" else imports.setdefault(local, ref)
        elif isinstance(stmt, (cst.Assign, cst.AnnAssign)):
            all_names = _all_names(module, stmt) or all_names
            targets = stmt.targets if isinstance(stmt, cst.Assign) else [stmt]
            values.update(t.target.value for t in targets if isinstance(t.target, cst.Name))
    return ModuleInfo(
        name=name,
        functions=functions,
        classes=classes,
        imports=imports,
        star_imports=tuple(stars),
        all_names=all_names,
        values=frozenset(values),
    )
