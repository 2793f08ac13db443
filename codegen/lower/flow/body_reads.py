"""What a stream function's body reads of its object, named by whole paths: ``a.y`` of ``self.a.y``, not ``a``.

The index names what a body reads of its object by first attribute (``reads_state``: ``a`` of ``self.a.y``), and a
pending call stood for a read of all of ``self.a``: the caller's write of the sibling ``self.a.x`` waited for it,
where the caller's own statements are read as whole chains (``read_paths.py``) and the same write spelled against
a call given ``self.a.y`` did not. The body's reads are now its chains on ``self`` too (``chain_reads``: up to where
a chain is called, indexed or viewed; ``self.a.m()`` reads all of ``self.a``, ``x = self.a`` all of it), and
:func:`refined` narrows each attribute of ``reads_state`` to the chains read under it. ``reads_state`` stays the
authority on which attributes are read (``"*"``: any, a method of the object or the object passed on; an attribute
the run's other files add, ``across_files.py``): an attribute with no chain read under it is read whole. A chain is
named by its path only where the run tells it apart from the other attributes of its object (``apart_attributes.py``:
``self.y = self.x`` in ``Pair.__init__`` makes ``a.x`` and ``a.y`` one memory), and cut at ``a.y``; elsewhere it reads
``a`` whole.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.lower.flow.read_paths import chain_reads

__all__ = ["body_read_paths", "callee_reads", "refined"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def body_read_paths(fn: _Function, receiver: str | None, apart: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The chains on ``receiver`` that ``fn`` reads, without the receiver (``a.y`` of ``self.a.y``), each cut where
    the run cannot tell its path apart (``apart``: ``apart_attributes.told_apart``): ``a.y`` where ``y`` is apart
    in ``a``'s object, else ``a``."""
    if receiver is None:
        return frozenset()
    prefix = f"{receiver}."
    return frozenset(_told(c[len(prefix) :], apart) for c in chain_reads(fn) if c.startswith(prefix))


def _told(path: str, apart: Mapping[str, frozenset[str]]) -> str:
    first, _, rest = path.partition(".")
    second = rest.partition(".")[0]
    return f"{first}.{second}" if second in apart.get(first, ()) else first


def refined(reads: frozenset[str], paths: frozenset[str]) -> frozenset[str]:
    """``reads`` (first attributes, ``"*"``: any) with each attribute narrowed to the paths read under it (``a.y``
    for ``a``), or kept whole where none is (or where one of them is the attribute itself)."""
    if "*" in reads:
        return reads
    found: set[str] = set()
    for attribute in reads:
        under = {p for p in paths if p.partition(".")[0] == attribute}
        found |= {attribute} if not under or attribute in under else under
    return frozenset(found)


def callee_reads(callee: object) -> frozenset[str]:
    """What a stream function's body reads of its object, as paths (``refined``; no callee known: ``"*"``)."""
    reads: frozenset[str] = getattr(callee, "reads_state", frozenset({"*"}))
    return refined(reads, getattr(callee, "read_paths", frozenset()))
