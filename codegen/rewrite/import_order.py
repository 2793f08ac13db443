"""Place each generated import line where isort and ruff (default settings) would put it.

Sections in order: ``__future__``, the standard library, third party, first party, relative imports.
Within a section plain ``import x`` lines come before ``from x import y`` lines, each sorted by module
name. Absolute modules outside the standard library count as third party, isort's default section;
where their lines span several blank-line groups, the first group is the third-party one (isort puts
the project's own modules after it), so a generated line joins that group. A line joins the existing
lines of its section at its sorted place, or opens a new section between its neighbours with one
blank line.
"""

from __future__ import annotations

import ast
import functools
import re
import sys

__all__ = ["clear_cache", "place_imports"]

_FUTURE, _STDLIB, _THIRD, _LOCAL = 0, 1, 2, 4
_LEADING = re.compile(r"\A(?:[ \t]*(?:#[^\n]*)?\n)*")
Key = tuple[int, tuple[bool, str]]


def place_imports(texts: list[str], block: range, lines: list[str], newline: str = "\n") -> tuple[list[str], int]:
    """``texts`` with ``lines`` placed among the import statements of ``block``; the block's new end.
    With no import statement in the block, a line goes at its end."""
    texts, end = list(texts), block.stop
    for line in lines:
        keys = {i: _key(texts[i]) for i in range(block.start, end)}
        keys = {i: k for i, k in keys.items() if k is not None}
        mine = _key(line)
        if not keys or mine is None:
            texts.insert(end, line + newline)
        else:
            _insert(texts, keys, mine, line, newline)
        end += 1
    return texts, end


def _insert(texts: list[str], keys: dict[int, Key], mine: Key, line: str, nl: str) -> None:
    """Insert ``line`` (ended by the file's own newline ``nl``) at isort's place among ``keys``."""
    section = _first_group([i for i, k in keys.items() if k[0] == mine[0]], texts)
    if section:
        before = [i for i in section if keys[i] <= mine]
        if before:
            texts.insert(max(before) + 1, line + nl)
        else:
            _put_above(texts, min(section), line + nl)
        return
    earlier = [i for i, k in keys.items() if k[0] < mine[0]]
    if earlier:
        texts.insert(max(earlier) + 1, nl + line + nl)
    else:
        _put_above(texts, min(keys), line + nl + nl)


def _first_group(indices: list[int], texts: list[str]) -> list[int]:
    """The lines of the first blank-line group: where one section spans several groups, isort put the
    third-party modules first and the project's own after them."""
    group = indices[:1]
    for i in indices[1:]:
        if i != group[-1] + 1 or texts[i].startswith(("\n", "\r")):
            break
        group.append(i)
    return group


def _put_above(texts: list[str], index: int, text: str) -> None:
    """Put ``text`` right above statement ``index``, below the comments and blank lines above it."""
    lead = _LEADING.match(texts[index]).group(0)  # type: ignore[union-attr]
    texts.insert(index, lead + text)
    texts[index + 1] = texts[index + 1][len(lead) :]


# Keyed on the statement's text, which alone decides its key: ``place_imports`` asks again for every line
# of the block each time it places one, and the same import lines recur from module to module.
@functools.lru_cache(maxsize=4096)
def _key(text: str) -> Key | None:
    """(section, sort key) of a one-statement import line; None for anything else (a statement that never
    spells ``import`` is no import: it is not parsed)."""
    if "import" not in text:
        return None
    try:
        nodes = ast.parse(text.strip()).body
    except SyntaxError:
        return None
    if len(nodes) != 1 or not isinstance(nodes[0], (ast.Import, ast.ImportFrom)):
        return None
    node = nodes[0]
    if isinstance(node, ast.ImportFrom) and node.level:
        return _LOCAL, (True, "." * node.level + (node.module or ""))
    module = node.names[0].name if isinstance(node, ast.Import) else node.module or ""
    return _section(module), (isinstance(node, ast.ImportFrom), module.lower())


def _section(module: str) -> int:
    top = module.split(".")[0]
    if top == "__future__":
        return _FUTURE
    return _STDLIB if top in sys.stdlib_module_names else _THIRD


def clear_cache() -> None:
    """Forget the keys read (see ``codegen.rewrite.build.clear_caches``)."""
    _key.cache_clear()
