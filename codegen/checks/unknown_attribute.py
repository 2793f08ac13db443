"""NPD205 (error): a ``when`` guard or dotted core count reads an attribute its class does not define.

``when="self.multistrem"`` (a typo of ``multistream``) is read only when the model runs; in
eager code that is an ``AttributeError`` deep in a call, under ``torch.compile`` an unrelated
dynamo error. The root of the name is NPD204's business; this rule resolves the next part
against what the class (``self.NAME``) or a class of the module (``Config.NAME``) defines, and
stays silent where the class's members cannot all be seen (see ``class_members``).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator

from codegen import scan
from codegen.checks.base import Context, Finding, Rule
from codegen.checks.class_members import Members, members_of
from codegen.diagnostics import Severity
from codegen.ir import Loc, StreamFunction

__all__ = ["RULE"]


def _names_read(fn: StreamFunction) -> Iterator[tuple[str, str, Loc]]:
    """(what, dotted, loc) for every guard and dotted core count of ``fn``."""
    for spec in (fn.stream, *fn.waits, *fn.records, fn.core_limit, fn.keep_output):
        if spec is not None and spec.when is not None:
            yield "when", spec.when.dotted, spec.loc
    limit = fn.core_limit
    if limit is not None:
        for kind, count in (("aicore", limit.aicore), ("vector", limit.vector)):
            if isinstance(count, str):
                yield f"core_limit {kind}", count, limit.loc


def _find(ctx: Context) -> Iterator[Finding]:
    if ctx.tree is None:
        return
    classes = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}
    functions = scan.functions_by_qualname(ctx.tree)
    for fn in ctx.ir.functions:
        receiver = _receiver(functions.get(fn.qualname), fn)
        for what, dotted, loc in _names_read(fn):
            parts = dotted.split(".")
            owner = fn.owner if parts[0] == receiver else parts[0] if parts[0] in classes else None
            if owner is None or owner not in classes or len(parts) < 2:
                continue
            members = members_of(classes[owner], classes)
            if not members.open and parts[1] not in members.names:
                yield _finding(what, dotted, owner, members, loc, receiver == parts[0])


def _receiver(node: ast.FunctionDef | ast.AsyncFunctionDef | None, fn: StreamFunction) -> str | None:
    if node is None or fn.owner is None or not node.args.args:
        return None
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    return None if static else node.args.args[0].arg


def _finding(what: str, dotted: str, owner: str, members: Members, loc: Loc, on_instance: bool) -> Finding:
    root, attribute = dotted.split(".")[:2]
    close = difflib.get_close_matches(attribute, sorted(members.names), n=1)
    where = "its instances" if on_instance else "it"
    message = f'{what}="{dotted}": class {owner} never defines "{attribute}" (nothing sets it on {where})'
    if close:
        fixed = ".".join([root, close[0], *dotted.split(".")[2:]])
        return Finding(loc=loc, message=message, hint=f'did you mean "{fixed}"?')
    place = f"set self.{attribute} in {owner}.__init__ (or give {owner} a class attribute)" if on_instance \
        else f"give class {owner} an attribute {attribute}"
    return Finding(loc=loc, message=message, hint=f"{place}, or name one it defines")


RULE = Rule(code="NPD205", severity=Severity.ERROR, title="guard or count reads an undefined attribute", find=_find)
