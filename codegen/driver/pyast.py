"""One ``ast`` parse per source within a run: the run index and collect share it.

Outside :func:`shared_trees` every call parses afresh. Inside, trees are kept by
source text (the same ``str`` objects flow from reading to indexing to collecting,
so a lookup costs a hash already cached on the string), and whether a source names
npudsl is scanned once (kept by the string's identity). Nothing here mutates a tree;
callers must not either.

Source text is taken as Python takes it: a leading UTF-8 byte order mark is not
code (:func:`without_bom`), and nesting as deep as Python itself compiles parses
and rewrites (:func:`deep`).
"""

from __future__ import annotations

import ast
import contextlib
import re
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from codegen.lower.flow.torch_callees import mark_torch_callees

__all__ = ["BOM", "deep", "mentions_npudsl", "parse", "shared_trees", "without_bom"]

BOM = "\ufeff"
# ``\bnpudsl\b``, spelled to start with its letters: the engine then skips to each occurrence at C speed, where
# ``\b`` first would have it try every position (some 30 times slower on a file that names npudsl)
_NPUDSL = re.compile(r"npudsl(?<!\wnpudsl)(?!\w)")
_T = TypeVar("_T")
_DEEP_STACK = 512 * 1024 * 1024  # bytes of (virtual) stack for deeply nested code
_DEEP_LIMIT = 200_000  # Python frames; libcst recurses several frames per nesting level


def mentions_npudsl(source: str) -> bool:
    """The cheap test: a file that never names npudsl has nothing to transform.

    A substring test first (a fast scan of the bytes); the word-boundary search runs only on the few
    files that contain the letters at all. Within :func:`shared_trees` each source is scanned once: the
    run's index, its triage and each file's analysis all ask, of the same ``str`` object (found by its
    identity, so a lookup does not hash the text).
    """
    if _mentions is None:
        return _names_npudsl(source)
    known = _mentions.get(id(source))
    if known is None or known[0] is not source:
        known = _mentions[id(source)] = (source, _names_npudsl(source))
    return known[1]


def _names_npudsl(source: str) -> bool:
    return "npudsl" in source and _NPUDSL.search(source) is not None


def without_bom(source: str) -> str:
    """``source`` without a leading byte order mark (Python ignores it; ``ast.parse`` of a ``str`` does not)."""
    return source[1:] if source.startswith(BOM) else source


def deep(function: Callable[..., _T], *args: object, **kwargs: object) -> _T:
    """``function(*args, **kwargs)``; when it exceeds the recursion limit (deeply nested code: a long
    expression is a deep tree), again in a thread with a large stack and a high limit."""
    try:
        return function(*args, **kwargs)
    except RecursionError:
        pass
    result: list[_T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(function(*args, **kwargs))
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    with _deep_limits():
        worker = threading.Thread(target=run, name="npudsl-deep")
        worker.start()
        worker.join()
    if failure:
        raise failure[0]
    return result[0]


_deep_lock = threading.Lock()


@contextlib.contextmanager
def _deep_limits() -> Iterator[None]:
    with _deep_lock:
        limit, stack = sys.getrecursionlimit(), threading.stack_size()
        sys.setrecursionlimit(max(limit, _DEEP_LIMIT))
        threading.stack_size(_DEEP_STACK)
        try:
            yield
        finally:
            threading.stack_size(stack)
            sys.setrecursionlimit(limit)


_LIMIT = 1024  # trees kept per run, bounding memory on very large runs
_cache: dict[str, ast.Module] | None = None
_mentions: dict[int, tuple[str, bool]] | None = None  # id(source) -> (source, it names npudsl), within a run


@contextlib.contextmanager
def shared_trees() -> Iterator[None]:
    """Within the block, :func:`parse` returns the same tree for the same source, and :func:`mentions_npudsl`
    scans each source once."""
    global _cache, _mentions
    previous, _cache, _mentions = (_cache, _mentions), {}, {}
    try:
        yield
    finally:
        _cache, _mentions = previous


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, shared within :func:`shared_trees`; raises as ``ast.parse`` does, except that
    nesting Python itself compiles never fails for the recursion limit."""
    if _cache is None:
        return mark_torch_callees(deep(ast.parse, source))
    tree = _cache.get(source)
    if tree is None:
        tree = mark_torch_callees(deep(ast.parse, source))  # calls through ``import torch as th`` (a fact, kept)
        if len(_cache) < _LIMIT:
            _cache[source] = tree
    return tree
