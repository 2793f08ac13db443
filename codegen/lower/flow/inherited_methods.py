"""Which base class of the run defines a method the caller's class inherits.

``class Attn(AttnBase)``, whose base defines ``def reset(self): self.cache.zero_()``: ``self.reset()`` in a method
of ``Attn`` runs ``AttnBase.reset``, which writes ``self.cache`` as surely as the same method written in ``Attn``
would (``imported_writes.py`` reads it where its class is defined, ``call_state_writes.py`` names the state it
writes). The bases are followed as ``codegen/index/class_chain.py`` follows them (in the same module, or imported
from a module the run holds; a base of a base too, first base first, as Python's method order finds a method of
single inheritance); a base from outside the package is not read (``nn.Module``'s methods write nothing of the
caller's), and a base of the package the run does not hold is left to the caller (``forward_of``: anything).

A method torch's ``nn.Module`` defines that runs the object's own ``forward`` (``self.sub._call_impl(x)``,
``_wrapped_call_impl``, ``_slow_forward``: ``torch_forward_runs.py``), where no class of the run's chain defines it,
runs the ``forward`` of the chain: the class's own, or a base's. Asked also of a submodule's class
(``self.sub.reset()``, ``self.sub(x)`` where ``Sub`` inherits ``forward`` from a base in another module of the run:
``imported_writes.ModuleFunctions``), so what that method writes and reads counts for the call.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import bases_of, class_of
from codegen.lower.flow.torch_module_methods import runs_forward

__all__ = ["base_method"]

_Home = tuple[str, str]  # (a module's run key, a class name there)
_FORWARD = "forward"


def base_method(index: object, module: str, owner: str, rest: tuple[str, ...]) -> tuple[str, str, str] | None:
    """(module, class, method) of the base of class ``owner`` of ``module`` that defines the method ``self.<rest>``
    calls (``rest``: one name), where the class does not define it itself; None where no base of the run does."""
    cls = class_of(index, module, owner)
    if len(rest) != 1 or cls is None or _defines(cls, rest[0]):
        return None
    home = _defining_base(index, (module, owner), cls, rest[0], frozenset())
    if home is None and runs_forward(rest[0]):  # ``self._call_impl(x)``: the chain's ``forward``
        found = (module, owner) if _defines(cls, _FORWARD) else base_method(index, module, owner, (_FORWARD,))
        return (*found[:2], _FORWARD) if found is not None else None
    return (*home, rest[0]) if home is not None else None


def _defining_base(index: object, at: _Home, cls: ast.ClassDef, name: str, seen: frozenset[_Home]) -> _Home | None:
    for home in bases_of(index, at[0], cls):
        base = class_of(index, *home) if home is not None and home not in seen else None
        if base is None or home is None:
            continue
        found = home if _defines(base, name) else _defining_base(index, home, base, name, seen | {at, home})
        if found is not None:
            return found
    return None


def _defines(cls: ast.ClassDef, name: str) -> bool:
    return any(fn.name == name for fn in scan.functions_of(cls))
