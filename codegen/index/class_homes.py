"""Where a class name is read across the run's modules: the class a module names, and a class's bases.

``class AscendDSAImpl(AttentionWeights)`` with ``from .weights import AttentionWeights``: the base is read in the
module the run holds for ``weights`` (:func:`home_of`). A base is followed where the run holds its module: defined
in the same module, imported by name relatively or by the absolute name of a module of the run; a base of such a
base too. A base imported from the package whose module the run does not hold (a file transformed alone) leaves the
object's attributes unknown (:func:`unheld_base`), as does a base the source computes: a call (``class
A(make_base())``) or a module-level name bound otherwise than by a class or an import (``Base = make_base()``) may be
any class. A base is read through a subscript (``Base[T]``) and through an attribute chain on an import
(``weights.Weights`` after ``from . import weights``, ``pkg.weights.Weights`` after ``import pkg.weights``). What the
object holds, read through these, is ``class_chain.py``'s.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index import scan
from codegen.index.blocks import module_scope
from codegen.index.walked import per_node
from codegen.lower.flow.imports import Binding, module_bindings, resolve_spec

__all__ = ["Home", "bases_of", "class_of", "home_of", "homes_of", "tree_of", "unheld_base"]

Home = tuple[str, str]  # (a module's run key, a class name there)


def class_of(index: object, module: str, name: str) -> ast.ClassDef | None:
    """The top-level class ``name`` of the module ``module`` (a run key), where the run holds it."""
    tree = tree_of(index, module)
    found = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name] if tree is not None else []
    return found[-1] if found else None


def home_of(index: object, module: str, local: str) -> Home | None:
    """(module, class name) of the class ``module`` names ``local``, where the run holds it."""
    return next((home for home in homes_of(index, module, local) if home is not None), None)


def bases_of(index: object, module: str, cls: ast.ClassDef) -> Iterator[Home | None]:
    """Each base of ``cls`` as (module, class name) where the run holds its class; None for one the package defines
    in a module the run does not hold, and for one the source computes (see above); bases from outside the package
    are left out."""
    for base in cls.bases:
        while isinstance(base, ast.Subscript):  # ``Base[T]``: the class is ``Base``
            base = base.value
        chain = scan.dotted_name(base)
        if chain is None:
            yield None  # ``make_base()``: any class
        elif "." in chain:
            yield from _attribute_home(index, module, chain.split("."))
        elif _computed(index, module, chain):
            yield None
        else:
            yield from homes_of(index, module, chain)


def unheld_base(index: object, module: str, name: str, seen: frozenset[Home] = frozenset()) -> bool:
    """Some base of class ``name`` of ``module`` (or of its bases) is the package's, in a module the run does not
    hold: what the object holds is not known."""
    cls = class_of(index, module, name)
    if cls is None or (module, name) in seen:
        return False
    homes = list(bases_of(index, module, cls))
    return None in homes or any(unheld_base(index, *h, seen | {(module, name)}) for h in homes if h is not None)


def homes_of(index: object, module: str, local: str) -> Iterator[Home | None]:
    """Where the class ``module`` names ``local`` is: (module, class name) where the run holds it; None where the
    package's module that defines it is not held; nothing where the name is no class the module defines or imports
    by name."""
    if class_of(index, module, local) is not None:
        yield module, local
        return
    imported = _imports(index, module).get(local)
    if imported is None:
        return
    spec, name = imported
    key = index.key_of(resolve_spec(spec, index.package_of(module)))  # type: ignore[attr-defined]
    if tree_of(index, key) is not None:
        yield key, name
    elif spec.startswith("."):
        yield None


def _attribute_home(index: object, module: str, chain: list[str]) -> Iterator[Home | None]:
    """``weights.Weights`` (``chain`` split at its dots) through the import that binds ``weights``: the class in the
    longest module of the chain the run holds; None where the run holds none of it and the import is the package's
    (relative, or of its top package), or the chain starts at a name bound otherwise (``Bases.Attn``)."""
    binding = _bindings(index, module).get(chain[0])
    if binding is None:
        if _computed(index, module, chain[0]) or class_of(index, module, chain[0]) is not None:
            yield None
        return
    dotted = [*binding.module.split("."), *([binding.name] if binding.name else []), *chain[1:]]
    for cut in range(len(dotted) - 1, 0, -1):
        key = index.key_of(".".join(dotted[:cut]))  # type: ignore[attr-defined]
        if tree_of(index, key) is not None:
            yield from homes_of(index, key, dotted[cut]) if cut == len(dotted) - 1 else [None]
            return
    if binding.spec.startswith(".") or dotted[0] == index.package_of(module).partition(".")[0]:  # type: ignore[attr-defined]
        yield None


def _bindings(index: object, module: str) -> dict[str, Binding]:
    tree = tree_of(index, module)
    return module_bindings(tree, index.package_of(module)) if tree is not None else {}  # type: ignore[attr-defined]


def _computed(index: object, module: str, name: str) -> bool:
    """``name`` is bound in the module's scope by a statement other than a class or an import (``Base =
    make_base()``): it may be any class."""
    tree = tree_of(index, module)
    return tree is not None and name in _assigned(tree)


@per_node
def _assigned(tree: ast.Module) -> frozenset[str]:
    """The names an assignment of the module's scope binds; read once per module."""
    kinds = (ast.Assign, ast.AnnAssign, ast.AugAssign)
    nodes = [n for node in module_scope(tree) if isinstance(node, kinds) for n in ast.walk(node)]
    return frozenset(n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


def tree_of(index: object, module: str) -> ast.Module | None:
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    return tree_of(module) if tree_of is not None else None


def _imports(index: object, module: str) -> dict[str, tuple[str, str]]:
    known = index.imports.get(module)  # type: ignore[attr-defined]
    if known is not None:
        return known
    tree = tree_of(index, module)
    return scan.imported_names(tree) if tree is not None else {}
