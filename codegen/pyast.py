"""One ``ast`` parse per source within a run: the run index and collect share it.

Outside :func:`shared_trees` every call parses afresh. Inside, trees are kept by
source text (the same ``str`` objects flow from reading to indexing to collecting,
so a lookup costs a hash already cached on the string). Nothing here mutates a tree;
callers must not either.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator

__all__ = ["parse", "shared_trees"]

_LIMIT = 1024  # trees kept per run, bounding memory on very large runs
_cache: dict[str, ast.Module] | None = None


@contextlib.contextmanager
def shared_trees() -> Iterator[None]:
    """Within the block, :func:`parse` returns the same tree for the same source."""
    global _cache
    previous, _cache = _cache, {}
    try:
        yield
    finally:
        _cache = previous


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, shared within :func:`shared_trees`; raises as ``ast.parse`` does."""
    if _cache is None:
        return ast.parse(source)
    tree = _cache.get(source)
    if tree is None:
        tree = ast.parse(source)
        if len(_cache) < _LIMIT:
            _cache[source] = tree
    return tree
