"""NPD205 (error): a ``when`` guard or dotted core count misspells an attribute its class defines.

``when="self.multistrem"`` (a typo of ``multistream``) is read only when the model runs; in
eager code that is an ``AttributeError`` deep in a call, under ``torch.compile`` an unrelated
dynamo error. The root of the name is NPD204's business; this rule resolves the next part
against what the class (``self.NAME``) or a class of the module (``Config.NAME``) defines, and
stays silent where the class's members cannot all be seen (see ``class_members``). A name the
class does not define and that is close to one it does is a typo (this error); a name close to
nothing may be set from outside the class (``layer.multistream = cfg.overlap``), which the
source cannot show: NPD513 (``undefined_attribute``) warns about it instead.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator

import attrs

from codegen.check.rules.base import Context, Finding, Rule
from codegen.check.rules.class_members import Members, members_of
from codegen.frontend.ir import Loc, StreamFunction
from codegen.index import scan
from npudsl import codes

__all__ = ["RULE", "Unknown", "unknown_attributes"]


def _names_read(fn: StreamFunction) -> Iterator[tuple[str, str, Loc]]:
    """(what, dotted, loc) for every guard and dotted core count of ``fn``."""
    for spec in fn.decorations:
        if spec.when is not None:
            yield "when", spec.when.dotted, spec.loc
    limit = fn.core_limit
    if limit is not None:
        for kind, count in (("aicore", limit.aicore), ("vector", limit.vector)):
            if isinstance(count, str):
                yield f"core_limit {kind}", count, limit.loc


@attrs.frozen
class Unknown:
    """A dotted name whose second part the class never defines; ``close`` is the nearest name it does."""

    what: str
    dotted: str
    owner: str
    loc: Loc
    on_instance: bool
    close: str | None


def unknown_attributes(ctx: Context) -> tuple[Unknown, ...]:
    """Every attribute a guard or count reads that its class does not define (found once per module: NPD205
    and NPD513 both read it)."""
    if "unknown_attributes" not in ctx.memo:
        ctx.memo["unknown_attributes"] = tuple(_unknown_attributes(ctx))
    return ctx.memo["unknown_attributes"]  # type: ignore[return-value]


def _unknown_attributes(ctx: Context) -> Iterator[Unknown]:
    if ctx.tree is None:
        return
    classes = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}
    members: dict[str, Members] = {}
    functions = scan.functions_by_qualname(ctx.tree)
    for fn in ctx.ir.functions:
        receiver = _receiver(functions.get(fn.qualname), fn)
        for what, dotted, loc in _names_read(fn):
            parts = dotted.split(".")
            owner = fn.owner if parts[0] == receiver else parts[0] if parts[0] in classes else None
            if owner is None or owner not in classes or len(parts) < 2:
                continue
            if owner not in members:
                members[owner] = members_of(classes[owner], classes)
            found = members[owner]
            if not found.open and parts[1] not in found.names:
                close = difflib.get_close_matches(parts[1], sorted(found.names), n=1)
                yield Unknown(what, dotted, owner, loc, receiver == parts[0], close[0] if close else None)


def _receiver(node: ast.FunctionDef | ast.AsyncFunctionDef | None, fn: StreamFunction) -> str | None:
    if node is None or fn.owner is None or not node.args.args:
        return None
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    return None if static else node.args.args[0].arg


def message(unknown: Unknown) -> str:
    attribute = unknown.dotted.split(".")[1]
    where = "its instances" if unknown.on_instance else "it"
    return (
        f'{unknown.what}="{unknown.dotted}": class {unknown.owner} never defines "{attribute}" '
        f"(nothing sets it on {where})"
    )


def _find(ctx: Context) -> Iterator[Finding]:
    for unknown in unknown_attributes(ctx):
        if unknown.close is not None:
            parts = unknown.dotted.split(".")
            fixed = ".".join([parts[0], unknown.close, *parts[2:]])
            yield Finding(loc=unknown.loc, message=message(unknown), hint=f'did you mean "{fixed}"?')


RULE = Rule(code=codes.UNKNOWN_ATTRIBUTE, find=_find)
