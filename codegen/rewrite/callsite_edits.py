"""The edits a caller's plan makes inside one statement: hoisted arguments, and a split first operand.

A planned call whose arguments were hoisted (bound to names before the call, so a join can go between
them) is spelled with those names in their slots; a binary operation whose first operand was bound
just before it (``y = a + f(x)`` when ``a`` must be read before ``f`` switches streams) reads that name.
Everything else of the statement stays as the user wrote it.
"""

from __future__ import annotations

import ast

import libcst as cst

from codegen.lower.plan import CallEdit, CallerPlan

__all__ = ["edited_statement"]


def edited_statement(small: cst.BaseSmallStatement, node: ast.stmt, plan: CallerPlan) -> cst.BaseSmallStatement:
    """``small`` (the libcst twin of ``node``) with the plan's edits of it, or itself when it has none."""
    name = plan.splits.get(node)
    if name is not None:  # its first operand was bound to ``name`` just before it
        value = small.value  # type: ignore[attr-defined]
        return small.with_changes(value=value.with_changes(left=cst.Name(name)))
    call = _planned_call(node, plan)
    if call is None:
        return small
    value = small.value  # type: ignore[attr-defined]
    if not isinstance(value, cst.Call):
        return small
    return small.with_changes(value=_edited(value, plan.calls[call]))


def _planned_call(node: ast.stmt, plan: CallerPlan) -> ast.Call | None:
    value = getattr(node, "value", None)
    return value if isinstance(value, ast.Call) and value in plan.calls else None


def _edited(call: cst.Call, edit: CallEdit) -> cst.Call:
    """Hoisted arguments replaced by the names they were bound to."""
    names = dict(edit.hoisted)
    args: list[cst.Arg] = []
    position = 0
    for arg in call.args:
        slot: int | str | None
        if arg.keyword is not None:
            slot = arg.keyword.value
        elif arg.star == "**":
            slot = "**"
        else:
            slot, position = position, position + 1
        args.append(arg.with_changes(value=cst.Name(names[slot])) if slot in names else arg)
    return call.with_changes(args=args)
