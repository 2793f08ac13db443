"""The stream function a call through a submodule reaches when a base class in another module assigns it.

``class Attn(AttnWeights)`` with ``from .weights import AttnWeights``, whose ``__init__`` makes
``self.indexer = Indexer(...)`` (``Indexer`` imported in ``weights.py``, not in the caller's module): the run index
records a class's submodules with those of its same-module bases only, so ``self.indexer(x)`` and
``self.indexer.score(x)`` in a method of ``Attn`` would be nobody's call and run on the caller's stream, with no
overlap. The class a base assigns is named in the base's module and read there (:func:`class_chain.forward_of
<codegen.index.class_chain.forward_of>`, which also follows a base of a base): the call then resolves as a
submodule's call of the caller's own ``__init__`` does.

Where the run does not hold a base of the package (a file transformed alone), that base may assign anything:
the call stays unresolved, on its caller's stream (safe, no overlap), as does a class from outside the package.
"""

from __future__ import annotations

from codegen.index.class_chain import forward_of

__all__ = ["inherited_key"]


def inherited_key(index: object, owner: str, attr: str, method: str = "forward") -> str | None:
    """The run key of the stream function ``method`` of the class that ``self.<attr>`` holds in an object of
    ``owner`` (``module:Class``), its class assigned by a base in another module of the run; None where no base
    the run holds assigns it, a base it does not hold may, or that method is no stream function of the run."""
    module, _, name = owner.partition(":")
    found = forward_of(index, module, name, attr) if name else None
    if found is None or not found[0]:
        return None
    home, qualname = found
    key = f"{home}:{qualname.rpartition('.')[0]}.{method}"
    return key if key in getattr(index, "callees", {}) else None
