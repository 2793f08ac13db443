"""Build statements from a target's spelling, grouping guarded ones under one ``if``."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import libcst as cst

from codegen.lower.plan import Cond, Context, Step
from codegen.rewrite.printing import module_code
from codegen.rewrite.textlines import split_lines
from codegen.targets.base import Spelling, indent

_MAX_WITH_LINE = 88

__all__ = [
    "clear_caches",
    "guarded_statements",
    "guarded_texts",
    "parse_definitions",
    "parse_statement",
    "plain",
    "printed_at",
    "statements",
    "with_header_at",
    "with_items_text",
    "with_text",
]


@functools.lru_cache(maxsize=4096)
def parse_statement(text: str) -> cst.BaseStatement:
    """``cst.parse_statement``, remembered: generated lines repeat, and libcst nodes are immutable."""
    return cst.parse_statement(text)


@functools.lru_cache(maxsize=64)
def parse_definitions(source: str) -> tuple[cst.BaseStatement, ...]:
    """The statements of a module's text (a target's helpers), the blank and comment lines above the first kept
    with it (the parser puts them in the module header); remembered like :func:`parse_statement`."""
    parsed = cst.parse_module(source)
    body = list(parsed.body)
    if body:
        body[0] = body[0].with_changes(leading_lines=[*parsed.header, *body[0].leading_lines])
    return tuple(body)


def clear_caches() -> None:
    """Forget every parsed text, so that a timing starts cold as one ``npudsl transform`` process does."""
    parse_statement.cache_clear()
    parse_definitions.cache_clear()
    printed_at.cache_clear()
    with_header_at.cache_clear()
    from codegen.rewrite import added, import_order  # added is built on this module

    added.clear_cache()
    import_order.clear_cache()


def statements(lines: Iterable[str]) -> list[cst.BaseStatement]:
    return [parse_statement(line.rstrip("\n") + "\n") for line in lines]


def guarded_statements(
    spelling: Spelling, steps: Sequence[Step], values: tuple[str, ...] = ()
) -> list[cst.BaseStatement]:
    """The steps' statements in order. Consecutive steps under the same condition share one ``if``; a step
    whose condition adds terms to its neighbours' nests inside theirs (``if g:`` ... ``if join:``)."""
    return statements(guarded_texts(spelling, steps, values))


def _nested(items: list[tuple[tuple[str, ...], list[str]]], depth: int) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(items):
        terms, lines = items[i]
        if len(terms) <= depth:
            out += lines
            i += 1
            continue
        j = i
        while j < len(items) and len(items[j][0]) > depth and items[j][0][depth] == terms[depth]:
            j += 1
        group = items[i:j]
        if all(t[depth:] == terms[depth:] for t, _ in group):  # one condition for all: ``if a and b:``
            out.append(f"if {Cond(terms[depth:]).text}:\n{indent([x for _, ls in group for x in ls])}")
        else:
            out.append(f"if {terms[depth]}:\n{indent(_nested(group, depth + 1))}")
        i = j
    return out


def with_items_text(spelling: Spelling, contexts: Sequence[Context]) -> list[str]:
    """Each context's ``with`` item, guarded ones falling back to ``nullcontext()``."""
    return [item for item in (spelling.with_item(c) for c in contexts) if item is not None]


def guarded_texts(spelling: Spelling, steps: Sequence[Step], values: tuple[str, ...] = ()) -> list[str]:
    """The texts of :func:`guarded_statements`, one per statement."""
    items = [
        (step.when.terms if step.when else (), lines) for step in steps if (lines := spelling.statements(step, values))
    ]
    return [line.rstrip("\n") + "\n" for line in _nested(items, 0)]


@functools.lru_cache(maxsize=4096)
def printed_at(text: str, at: str, indent: str, newline: str) -> tuple[str, ...]:
    """The lines of the generated statement ``text`` as a module of this indent and newline prints it in a block
    indented by ``at`` (remembered: the same statements go in many places)."""
    lines = text.split("\n")[:-1]
    if text.endswith("\n") and plain(lines, indent, newline):
        return tuple(f"{at}{line}\n" for line in lines)
    return _printed(parse_statement(text), at, indent, newline)


def plain(lines: list[str], indent: str, newline: str) -> bool:
    """Whether libcst prints ``lines`` (a statement) as they are, each after the block's indentation: a module
    indented by four spaces, lines each a step of four spaces at most deeper than the one before, no line
    ending in a string or a backslash, no blank line."""
    if indent != "    " or newline != "\n":
        return False
    depth = 0
    for line in lines:
        spaces = len(line) - len(line.lstrip(" "))
        if spaces % 4 or spaces > depth + 4 or not line.strip() or line[spaces] in "\t\f":
            return False
        if line.endswith("\\") or "\r" in line or '"""' in line or "'''" in line:
            return False
        depth = spaces
    return bool(lines) and not lines[0].startswith(" ")


def with_text(items: list[str]) -> str:
    """``with <items>:`` around ``pass`` (one line, or one item a line when that is too long)."""
    one_line = f"with {', '.join(items)}:\n    pass\n"
    if len(one_line.splitlines()[0]) + 8 > _MAX_WITH_LINE and len(items) > 1:
        one_line = "with (\n" + "".join(f"    {item},\n" for item in items) + "):\n    pass\n"
    return one_line


@functools.lru_cache(maxsize=1024)
def with_header_at(items: tuple[str, ...], at: str, indent: str, newline: str) -> tuple[str, ...]:
    """The lines of the ``with`` a wrap opens (see ``function.wrap_with``), printed in a block indented by ``at``."""
    text = with_text(list(items))
    if plain(text.split("\n")[:-1], indent, newline):
        return printed_at(text, at, indent, newline)[:-1]
    node = parse_statement(text)
    assert isinstance(node, cst.With)
    made = node.with_changes(body=cst.IndentedBlock(body=[parse_statement("pass\n")]))  # as ``wrap_with`` makes it
    return _printed(made, at, indent, newline)[:-1]


def _printed(node: cst.BaseStatement, at: str, indent: str, newline: str) -> tuple[str, ...]:
    holder = cst.If(test=cst.Name("x"), body=cst.IndentedBlock(body=[node], indent=at))
    code = module_code([holder], indent=indent, newline=newline)
    return tuple(split_lines(code)[1:])
