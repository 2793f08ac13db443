"""The module-level statements a rewrite adds below the imports: the target's helpers, then the events.

The helpers are the same in every module of a run, so their printed text is made once (libcst
prints them, its spacing below the imports applied or not). Each event is one generated line,
printed as it is in the module's default style (``build.printed_at``); libcst prints them
only in another style. The text is the one of printing all of them as one list of statements.
"""

from __future__ import annotations

import functools

import libcst as cst

from codegen.lower.plan import ModulePlan
from codegen.rewrite.build import parse_definitions, plain, printed_at, statements
from codegen.rewrite.printing import module_code
from codegen.targets.base import Spelling

__all__ = ["added_text", "clear_cache", "event_lines"]


def event_lines(plan: ModulePlan, spelling: Spelling) -> list[str]:
    """The events' definitions (asked before the imports: spelling one may need an import)."""
    return [line for line in (spelling.define_event(e) for e in plan.events if e.source is None) if line]


def added_text(lines: list[str], spelling: Spelling, after_imports: bool, indent: str, newline: str) -> str:
    """The helpers, then the events defined by ``lines``, printed; ``after_imports``: spaced as isort spaces
    them there."""
    source = spelling.helper_source()
    comment = spelling.event_comment() if lines else None
    texts = [line.rstrip("\n") + "\n" for line in lines]
    if not all(plain(text.split("\n")[:-1], indent, newline) for text in texts):
        return _printed(source, tuple(texts), comment, after_imports, indent, newline)
    helpers = _helpers(source, after_imports, indent, newline)
    if not texts:
        return helpers
    blank = 1 if after_imports and not helpers else 2 if helpers else 1
    leading = "\n" * blank + (f"{comment}\n" if comment else "")
    return helpers + leading + "".join(line for text in texts for line in printed_at(text, "", indent, newline))


@functools.lru_cache(maxsize=64)
def _helpers(source: str, after_imports: bool, indent: str, newline: str) -> str:
    return _printed(source, (), None, after_imports, indent, newline)


def clear_cache() -> None:
    _helpers.cache_clear()


def _printed(
    source: str, texts: tuple[str, ...], comment: str | None, after_imports: bool, indent: str, newline: str
) -> str:
    """Helpers and events through libcst."""
    helpers = list(parse_definitions(source))
    events = statements(texts)
    if events:
        leading = [cst.EmptyLine()] * (2 if helpers else 1)
        leading += [cst.EmptyLine(comment=cst.Comment(comment))] if comment else []
        events[0] = events[0].with_changes(leading_lines=leading)
    added = _spaced_after_imports(helpers + events) if after_imports else helpers + events
    return module_code(added, indent=indent, newline=newline) if added else ""


def _spaced_after_imports(added: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """isort's spacing below the imports: two blank lines before a definition, one before anything else;
    the comments above the first added statement stay."""
    if not added:
        return added
    first = added[0]
    blank = 2 if isinstance(first, (cst.FunctionDef, cst.ClassDef)) else 1
    comments = [line for line in first.leading_lines if line.comment is not None]  # type: ignore[attr-defined]
    return [first.with_changes(leading_lines=[cst.EmptyLine()] * blank + comments), *added[1:]]
