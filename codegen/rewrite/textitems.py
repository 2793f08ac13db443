"""The new items of a block on its text (kept lines, generated statements, wraps) and how they print.

A block the text path rewrites is a list of items: lines kept as they are, statements the plan adds
(:class:`Gen`), and statements put on their stream (:class:`Wrap`: ``with <switch>:`` around them).
Consecutive wraps on the same stream share one ``with``, as the libcst path merges them
(``callsite_wraps``); printing indents each item as the block's other statements.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from codegen.rewrite.build import printed_at, with_header_at
from codegen.rewrite.segments import Style
from codegen.rewrite.textlines import Line, shifted

__all__ = ["Gen", "Item", "Wrap", "merged", "printed"]


@attrs.frozen
class Gen:
    """Generated statements (their texts), printed in the block where they go."""

    texts: tuple[str, ...]


@attrs.define
class Wrap:
    """A statement on its stream: ``with <items>:`` around ``enter``, the statement's lines and ``leave``."""

    items: tuple[str, ...]
    body: list[Gen | list[Line]]
    lead: bool  # the statement had blank or comment lines above it (a wrap after it keeps its own ``with``)


Item = Gen | Wrap | list[Line]


def merged(items: list[Item], at: str, indent: str) -> list[Item]:
    """Consecutive wraps on the same stream, no statement between them, share one ``with`` (as ``callsites``):
    the blank and comment lines between them (``at``: the block's indentation) move inside it."""
    out: list[Item] = []
    for item in items:
        last = out[-1] if out else None
        lead = out[-2] if len(out) > 1 and isinstance(last, list) else None
        if isinstance(item, Wrap) and isinstance(last, Wrap) and last.items == item.items and not item.lead:
            out[-1] = Wrap(items=last.items, body=[*last.body, *item.body], lead=last.lead)
        elif isinstance(item, Wrap) and isinstance(lead, Wrap) and lead.items == item.items and item.lead:
            between = shifted(last, at, indent)  # type: ignore[arg-type]
            out[-2:] = [Wrap(items=lead.items, body=[*lead.body, between, *item.body], lead=lead.lead)]
        else:
            out.append(item)
    return out


def printed(items: Sequence[Item], at: str, style: Style) -> list[Line]:
    """The lines of ``items`` in a block indented by ``at``."""
    out: list[Line] = []
    for item in items:
        if isinstance(item, Gen):
            for text in item.texts:
                out += [(line, True) for line in printed_at(text, at, style.indent, style.newline)]
        elif isinstance(item, Wrap):
            out += [(line, True) for line in with_header_at(item.items, at, style.indent, style.newline)]
            out += printed(item.body, at + style.indent, style)
        else:
            out += item
    return out
