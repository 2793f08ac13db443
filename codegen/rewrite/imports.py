"""Module-level edits: drop npudsl imports nothing uses, add the target's imports, create events once."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
import libcst.matchers as m

from codegen.collect import NpudslNames
from codegen.plan import ModulePlan
from codegen.rewrite.build import statements, with_items_text
from codegen.rewrite.returns import local_names
from codegen.rewrite.walk import children
from codegen.targets.base import Target, module_definitions, module_imports

__all__ = ["finish_module"]

_DOCSTRING = m.SimpleStatementLine(body=[m.Expr(m.SimpleString() | m.ConcatenatedString())])


def finish_module(module: cst.Module, plan: ModulePlan, target: Target, names: NpudslNames,
                  unchanged: Mapping[int, str] | None = None) -> cst.Module:
    """``unchanged``: id -> source text of the top-level statements the rewrite left as parsed, if known."""
    body = _drop_unused_npudsl(list(module.body), names, unchanged or {})
    existing = {module.code_for_node(stmt).strip() for stmt in body if _is_import_line(stmt)}
    wanted = [line for line in _imports(plan, target) if line not in existing]
    at = _after_imports(body)
    helpers = _helper_definitions(plan, target)
    added = statements(wanted) + helpers + _event_definitions(plan, target, after_helpers=bool(helpers))
    return module.with_changes(body=[*body[:at], *added, *body[at:]])


def _imports(plan: ModulePlan, target: Target) -> list[str]:
    lines = module_imports(target, plan)
    if lines is None:
        lines = target.imports(events=bool(plan.events)) if _emits(plan, target) else []
    if any(with_items_text(target, [c]) and c.when for p in plan.functions.values() for c in p.contexts):
        lines.append("from contextlib import nullcontext")
    by_source: dict[str, list[str]] = {}
    for event in plan.events:
        if event.source is not None and target.define_event(event) is not None:
            by_source.setdefault(event.source, []).append(event.var)
    lines += [f"from {source} import {', '.join(sorted(vars_))}" for source, vars_ in by_source.items()]
    return lines


def _emits(plan: ModulePlan, target: Target) -> bool:
    """Whether the module spells any step: a context the target skips (the main stream) needs no import."""
    return bool(plan.joins) or any(with_items_text(target, p.contexts) or p.before or p.prologue or p.epilogue
                                   for p in plan.functions.values())


def _helper_definitions(plan: ModulePlan, target: Target) -> list[cst.BaseStatement]:
    """The target's module-level helpers (source text, blank lines and comments kept)."""
    parsed = cst.parse_module(module_definitions(target, plan))
    body = list(parsed.body)
    if body:  # the parser keeps leading blank lines and comments in the module header
        body[0] = body[0].with_changes(leading_lines=[*parsed.header, *body[0].leading_lines])
    return body


def _event_definitions(plan: ModulePlan, target: Target, *, after_helpers: bool) -> list[cst.BaseStatement]:
    lines = [target.define_event(e) for e in plan.events if e.source is None]
    defined = statements(line for line in lines if line)
    if not defined:
        return []
    comment = target.module_comment()
    leading = [cst.EmptyLine()] * (2 if after_helpers else 1)
    leading += [cst.EmptyLine(comment=cst.Comment(comment))] if comment else []
    return [defined[0].with_changes(leading_lines=leading), *defined[1:]]


def _after_imports(body: list[cst.BaseStatement]) -> int:
    """Index just after the leading docstring and import block."""
    at = 1 if body and m.matches(body[0], _DOCSTRING) else 0
    last = at
    for i, stmt in enumerate(body[at:], start=at):
        if _is_import_line(stmt):
            last = i + 1
        elif not isinstance(stmt, (cst.If, cst.Try)):
            break
    return last


def _drop_unused_npudsl(body: list[cst.BaseStatement], names: NpudslNames,
                        unchanged: Mapping[int, str]) -> list[cst.BaseStatement]:
    local = set(names.aliases) | set(names.modules)
    if not local:
        return body
    used: set[str] = set()
    for stmt in body:
        if not _is_import_line(stmt):
            used |= _names_in(stmt, local, unchanged)
    out: list[cst.BaseStatement] = []
    for stmt in body:
        kept = _trim_line(stmt, local - used) if _is_import_line(stmt) else stmt
        if kept is not None:
            out.append(kept)
    return out


def _is_import_line(stmt: cst.BaseStatement) -> bool:
    """A line holding imports and nothing else."""
    return isinstance(stmt, cst.SimpleStatementLine) and bool(stmt.body) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in stmt.body)


def _names_in(node: cst.CSTNode, local: set[str], unchanged: Mapping[int, str]) -> set[str]:
    """``local_names(node)``, skipping statements left as parsed whose text spells none of ``local``."""
    text = unchanged.get(id(node))
    if text is not None:
        return local_names(node) if any(name in text for name in local) else set()
    if isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
        found = set().union(*(local_names(child) for child in children(node) if child is not node.body))
        for member in node.body.body:
            found |= _names_in(member, local, unchanged)
        return found
    return local_names(node)


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
        and not node.relative)
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
