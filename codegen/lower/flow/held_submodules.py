"""The stream function a call reaches through a submodule of a submodule: a holder of a holder.

``class Top`` makes ``self.block = Block()`` in its ``__init__``, and ``Block.__init__`` makes ``self.indexer =
Indexer()`` of a decorated class: ``self.block.indexer(x)`` in a method of ``Top`` calls ``Indexer.forward``. A
resolver that read ``self.block.indexer`` only as a method ``indexer`` of ``Block`` found none, so the call was
nobody's: it ran on its caller's stream and overlapped nothing (``npudsl check``: NPD502). Here ``self.block``'s
class is read where the caller's ``__init__`` names it, and ``indexer`` among that class's submodules, in the module
that assigns it (``submodule_keys.owner_submodule_key``, which follows a base of ``Block`` in another module too).
The driver indexes a file holding such a holder though it names neither npudsl nor ``Indexer``
(``codegen/driver/subclass_callers.py``). A submodule a base of the caller's class assigns, or one level deeper
(``self.a.b.c(x)``), stays unresolved: on its caller's stream, safe, no overlap.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.name_keys import named_class
from codegen.lower.flow.submodule_keys import Holders, owner_submodule_key

__all__ = ["held_submodule_key"]


def held_submodule_key(found: Holders, attr: str, sub: str, method: str = "forward") -> str | None:
    """The key of ``method`` (a stream function) of the class that ``self.<attr>.<sub>`` holds, where the caller's
    ``__init__`` makes ``self.<attr>`` of a class of the run whose ``__init__`` makes ``self.<sub>``."""
    written = found.submodules.get(f"{found.module}:{found.owner}", {}).get(attr) if found.owner else None
    if written is None:
        return None
    owner = named_class(found, ast.parse(written, mode="eval").body)
    return owner_submodule_key(found, owner, sub, method) if owner is not None else None
