"""The stream function a call reaches through submodules of submodules: a holder of a holder, at any depth.

``class Top`` makes ``self.block = Block()`` in its ``__init__``, and ``Block.__init__`` makes ``self.indexer =
Indexer()`` of a decorated class: ``self.block.indexer(x)`` in a method of ``Top`` calls ``Indexer.forward``, and
``self.block.indexer.prep(x)`` its method ``prep``; one holder further (``self.mid.block.indexer(x)``, where
``Mid.__init__`` makes ``self.block = Block()``) the same. A resolver that read ``self.block.indexer`` only as a
method ``indexer`` of ``Block`` found none, so the call was nobody's: it ran on its caller's stream and overlapped
nothing (``npudsl check``: NPD502). Here each attribute of the chain is read among the submodules of the class the
one before holds, in the module that assigns it (the caller's ``__init__`` for the first, read in the caller's
module; each next in the module of the class before, through ``class_in``); the last attribute is a method of the
class the chain holds (a stream function of the run), or else a submodule whose class's ``forward`` is one
(``submodule_keys.owner_submodule_key``, which follows a base of that class in another module too). The driver
indexes a file holding such a holder though it names neither npudsl nor ``Indexer``
(``codegen/driver/subclass_callers.py``). A holder made by a factory function of the run (``self.block =
make_block()``) holds the class the factory makes (``codegen/index/made_class_in.py``, through ``class_in``). A
holder that a base of its owner's class assigns, but for the last, stays unresolved: on its caller's stream, safe,
no overlap.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from codegen.lower.flow.name_keys import named_class
from codegen.lower.flow.submodule_keys import Holders, owner_submodule_key

__all__ = ["held_key", "self_chain"]


def self_chain(node: ast.expr, is_self: Callable[[ast.expr], bool]) -> list[str] | None:
    """The attributes ``node`` reads after the receiver (``self.mid.block`` -> ``["mid", "block"]``); None where it
    is no chain of attributes of the receiver."""
    chain: list[str] = []
    while isinstance(node, ast.Attribute):
        chain.insert(0, node.attr)
        node = node.value
    return chain if chain and is_self(node) else None


def held_key(found: Holders, chain: list[str], attr: str) -> tuple[str, str] | None:
    """The key of the stream function ``self.<chain>.<attr>(...)`` calls, and the object it runs on: the method
    ``attr`` of the class ``self.<chain>`` holds, or else ``forward`` of the class its submodule ``attr`` holds."""
    owner: str | None = f"{found.module}:{found.owner}" if found.owner else None
    for part in chain[:-1]:
        owner = _held_class(found, owner, part) if owner else None
    if owner is None:
        return None
    receiver = f"self.{'.'.join(chain)}"
    method = owner_submodule_key(found, owner, chain[-1], attr)
    if method is not None:
        return method, receiver
    holder = _held_class(found, owner, chain[-1])
    key = owner_submodule_key(found, holder, attr) if holder else None
    return (key, f"{receiver}.{attr}") if key else None


def _held_class(found: Holders, owner: str, attr: str) -> str | None:
    """``module:Class`` of what ``self.<attr>`` holds in an object of ``owner``, read where its ``__init__`` makes
    it (in the caller's module through its names, in another through ``class_in``; a factory of the run, in either,
    through ``class_in``: ``made_class_in.py``)."""
    written = found.submodules.get(owner, {}).get(attr)
    module = owner.rpartition(":")[0]
    if written is None:
        return None
    named = named_class(found, ast.parse(written, mode="eval").body) if module == found.module else None
    if named in found.submodules:  # a class of the run the caller's module names
        return named
    made = found.class_in(module, written) if found.class_in is not None else None
    return made or named
