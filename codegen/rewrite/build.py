"""Build statements from target text, grouping guarded ones under one ``if``."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import libcst as cst

from codegen.ir import Guard
from codegen.plan import Context, KeepAlive, Step
from codegen.targets.base import Target

__all__ = ["guarded_statements", "parse_statement", "statements", "with_items_text"]


@functools.lru_cache(maxsize=4096)
def parse_statement(text: str) -> cst.BaseStatement:
    """``cst.parse_statement``, remembered: generated lines repeat, and libcst nodes are immutable."""
    return cst.parse_statement(text)


def statements(lines: Iterable[str]) -> list[cst.BaseStatement]:
    return [parse_statement(line + "\n") for line in lines]


def guarded_statements(target: Target, steps: Sequence[Step], values: tuple[str, ...] = ()) -> list[cst.BaseStatement]:
    """The steps' statements in order; consecutive steps under the same guard share one ``if``."""
    out: list[cst.BaseStatement] = []
    group: list[str] = []
    guard: Guard | None = None
    for step in steps:
        lines = target.statements(step, _values_of(step, values))
        if step.when != guard and group:
            out.extend(_flush(group, guard))
            group = []
        guard = step.when
        group.extend(lines)
    out.extend(_flush(group, guard))
    return out


def _values_of(step: Step, values: tuple[str, ...]) -> tuple[str, ...]:
    return step.tensors if isinstance(step, KeepAlive) and step.tensors else values


def _flush(lines: list[str], guard: Guard | None) -> list[cst.BaseStatement]:
    if not lines:
        return []
    if guard is None:
        return statements(lines)
    body = "".join(f"    {line}\n" for line in lines)
    return [parse_statement(f"if {guard.dotted}:\n{body}")]


def with_items_text(target: Target, contexts: Sequence[Context]) -> list[str]:
    """Each context's ``with`` item, guarded ones falling back to ``nullcontext()``."""
    items = []
    for context in contexts:
        text = target.context(context)
        if text is None:
            continue
        items.append(f"{text} if {context.when.dotted} else nullcontext()" if context.when else text)
    return items
