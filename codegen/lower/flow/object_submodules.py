"""The submodules an object of a class holds, and the class every element of its layer lists holds, for a class of
any module the run reads.

The index records both for the modules it indexes (``index.submodules``, ``index.elements``:
``codegen/index/definitions.py``), not for a module read only when a question needs it (a sibling file read from disk,
a module of the run searched for no call site: ``codegen/index/pending.py``), and a class's record holds no attribute
that a base in another module assigns. ``self.sub.reset()``, with ``class Sub`` in such a module, runs
``self.norm.reset_running_stats()`` there: with no record, ``self.norm`` held nothing known and the call was taken to
write nothing of it, whether the files were transformed together or alone. Both are now read from the class itself
and its bases across the run's modules (``class_chain.origins``; element classes from the class's own ``__init__``,
``codegen/index/elements.py``), the index's record first where it has one; each once per class and run.
"""

from __future__ import annotations

from codegen.index.class_chain import class_of, origins
from codegen.index.elements import element_classes
from codegen.index.per_index import per_run
from codegen.lower.flow.imported_writes import ModuleFunctions, module_functions

__all__ = ["element_class", "submodule_class"]

_Held = tuple[ModuleFunctions, str]  # the module that names a submodule's class, and that name


def submodule_class(functions: ModuleFunctions, owner: str, attr: str) -> _Held | None:
    """The class ``self.<attr>`` holds in an object of class ``owner`` of the module of ``functions``, named in the
    module returned (see above)."""
    key = (functions.key, owner)
    known = _submodules(functions.index)
    if key not in known:
        known[key] = _read(functions, owner)
    module, name = known[key].get(attr, ("", ""))
    held = functions if module == functions.key else _module(functions, module) if module else None
    return (held, name) if held is not None else None


def element_class(functions: ModuleFunctions, owner: str, attr: str) -> str | None:
    """The class every element of the list ``self.<attr>`` holds, named in the module of ``functions``."""
    recorded = functions.index.elements.get(f"{functions.key}:{owner}")  # type: ignore[attr-defined]
    if recorded is None:
        cls = class_of(functions.index, functions.key, owner)
        recorded = element_classes(cls) if cls is not None else {}
    return recorded.get(attr)


def _read(functions: ModuleFunctions, owner: str) -> dict[str, tuple[str, str]]:
    """The class's submodules from its chain of bases, each with the module naming its class (a run key) and that
    name; the index's record wins."""
    recorded = functions.index.submodules.get(f"{functions.key}:{owner}", {})  # type: ignore[attr-defined]
    own = {attr: (functions.key, name) for attr, name in recorded.items()}
    return origins(functions.index, functions.key, owner) | own


def _module(functions: ModuleFunctions, key: str) -> ModuleFunctions | None:
    tree_of = getattr(functions.index.returns, "tree_of", None)  # type: ignore[attr-defined]
    tree = tree_of(key) if tree_of is not None else None
    return module_functions(functions.index, key, tree) if tree is not None else None


@per_run
def _submodules(index: object) -> dict[tuple[str, str], dict[str, tuple[str, str]]]:
    """The classes' submodules read for the run of ``index`` (the last run asked about only)."""
    return {}
