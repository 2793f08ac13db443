"""A class and its base classes across the run's modules: which submodules the object holds, and where each class
name is read.

``class AscendDSAImpl(AttentionWeights)`` with ``from .weights import AttentionWeights``: the weights' ``__init__``
assigns ``self.kv_norm = RMSNorm(...)``, so ``self.kv_norm(x)`` in a method of the subclass is a submodule's call,
not a method's: it reads ``kv_norm`` only (``writes.reads_state``), and what it writes of its input is
``RMSNorm.forward``'s, read in the module that names ``RMSNorm`` (``imported_writes.py``), which the subclass's
module need not import. A base is followed where the run holds its module: defined in the same module, imported by
name relatively or by the absolute name of a module of the run; a base of such a base too. An attribute a class
stores itself, in any method, is that class's: a base's assignment does not hold there (a ``setattr`` on the object
hides every base's). A base imported from the package whose module the run does not hold (a file transformed
alone) leaves the object's attributes unknown (:func:`unheld_base`), as does a base the source computes: a call
(``class A(make_base())``) or a module-level name bound otherwise than by a class or an import (``Base =
make_base()``) may be any class. A base is read through a subscript (``Base[T]``) and through an attribute chain
on an import (``weights.Weights`` after ``from . import weights``, ``pkg.weights.Weights`` after ``import
pkg.weights``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index import scan
from codegen.index.blocks import module_scope
from codegen.index.factory_made import made_by
from codegen.index.per_index import per_run
from codegen.index.walked import per_node, walked_of
from codegen.lower.flow.imports import Binding, module_bindings, resolve_spec

__all__ = ["Origins", "bases_of", "class_of", "forward_of", "home_of", "origins", "unheld_base"]

Origins = dict[str, tuple[str, str]]  # attribute -> (the run key of the module naming its class, the class name)
_Home = tuple[str, str]  # (a module's run key, a class name there)


def class_of(index: object, module: str, name: str) -> ast.ClassDef | None:
    """The top-level class ``name`` of the module ``module`` (a run key), where the run holds it."""
    tree = _tree(index, module)
    found = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name] if tree is not None else []
    return found[-1] if found else None


def home_of(index: object, module: str, local: str) -> _Home | None:
    """(module, class name) of the class ``module`` names ``local``, where the run holds it."""
    return next((home for home in _home(index, module, local) if home is not None), None)


def bases_of(index: object, module: str, cls: ast.ClassDef) -> Iterator[_Home | None]:
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
            yield from _home(index, module, chain)


def origins(index: object, module: str, name: str) -> Origins:
    """The submodules of class ``name`` of ``module``, its bases' included, each with where its class is read (read
    once per class and run: each unresolved call of a submodule asks, ``forward_of``)."""
    known = _origins(index)
    if (module, name) not in known:
        known[(module, name)] = _origins_of(index, module, name)
    return dict(known[(module, name)])


@per_run
def _origins(index: object) -> dict[_Home, Origins]:
    return {}


def _origins_of(index: object, module: str, name: str, seen: frozenset[_Home] = frozenset()) -> Origins:
    cls = class_of(index, module, name)
    if cls is None or (module, name) in seen:
        return {}
    found: Origins = {}
    for home in reversed([h for h in bases_of(index, module, cls) if h is not None]):
        found.update(_origins_of(index, *home, seen | {(module, name)}))
    stored = _stored(cls)
    found = {} if "*" in stored else {a: o for a, o in found.items() if a not in stored}
    found.update({attr: (module, made) for attr, made in scan.submodule_assignments(cls).items()})
    return found


def forward_of(index: object, module: str, owner: str, attr: str) -> tuple[str, str] | None:
    """(module, qualname) of the ``forward`` that ``self.<attr>(...)`` runs in a method of class ``owner`` of
    ``module``, its class assigned by a base in another module (or made by a factory function of the run,
    ``factory_made.py``); ``("", "")`` where a base of the package the run
    does not hold may assign it (nothing is known of that call); None where no base of the run assigns it, or its
    class comes from outside the package."""
    cls = class_of(index, module, owner)
    written = scan.submodule_assignments(cls).get(attr) if cls is not None else None  # as ``origins`` has it
    found = (module, written) if written is not None else origins(index, module, owner).get(attr)
    if found is not None:  # a factory of the run makes it (``factory_made.py``): the class it makes
        found = made_by(index, *found) or found
    if found is None:
        own = cls is not None and attr in {f.name for f in scan.functions_of(cls)}
        return ("", "") if not own and unheld_base(index, module, owner) else None
    homes = list(_home(index, *found))
    if not homes:
        return None
    return ("", "") if homes[0] is None else (homes[0][0], f"{homes[0][1]}.forward")


def unheld_base(index: object, module: str, name: str, seen: frozenset[_Home] = frozenset()) -> bool:
    """Some base of class ``name`` of ``module`` (or of its bases) is the package's, in a module the run does not
    hold: what the object holds is not known."""
    cls = class_of(index, module, name)
    if cls is None or (module, name) in seen:
        return False
    homes = list(bases_of(index, module, cls))
    return None in homes or any(unheld_base(index, *h, seen | {(module, name)}) for h in homes if h is not None)


def _home(index: object, module: str, local: str) -> Iterator[_Home | None]:
    if class_of(index, module, local) is not None:
        yield module, local
        return
    imported = _imports(index, module).get(local)
    if imported is None:
        return
    spec, name = imported
    key = index.key_of(resolve_spec(spec, index.package_of(module)))  # type: ignore[attr-defined]
    if _tree(index, key) is not None:
        yield key, name
    elif spec.startswith("."):
        yield None


def _attribute_home(index: object, module: str, chain: list[str]) -> Iterator[_Home | None]:
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
        if _tree(index, key) is not None:
            yield from _home(index, key, dotted[cut]) if cut == len(dotted) - 1 else [None]
            return
    if binding.spec.startswith(".") or dotted[0] == index.package_of(module).partition(".")[0]:  # type: ignore[attr-defined]
        yield None


def _bindings(index: object, module: str) -> dict[str, Binding]:
    tree = _tree(index, module)
    return module_bindings(tree, index.package_of(module)) if tree is not None else {}  # type: ignore[attr-defined]


def _computed(index: object, module: str, name: str) -> bool:
    """``name`` is bound in the module's scope by a statement other than a class or an import (``Base =
    make_base()``): it may be any class."""
    tree = _tree(index, module)
    return tree is not None and name in _assigned(tree)


@per_node
def _assigned(tree: ast.Module) -> frozenset[str]:
    """The names an assignment of the module's scope binds; read once per module."""
    kinds = (ast.Assign, ast.AnnAssign, ast.AugAssign)
    nodes = [n for node in module_scope(tree) if isinstance(node, kinds) for n in ast.walk(node)]
    return frozenset(n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


@per_node
def _stored(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes any method of ``cls`` stores on its object (``*``: ``setattr`` on it); read once per class."""
    found: set[str] = set()
    for fn in scan.functions_of(cls):
        receiver = fn.args.args[0].arg if fn.args.args else None
        found |= {n.attr for n in walked_of(fn, ast.Attribute) if _stores(n, receiver)}
        calls = walked_of(fn, ast.Call)
        if any(scan.dotted_name(c.func) == "setattr" and c.args and _is(c.args[0], receiver) for c in calls):
            found.add("*")
    return frozenset(found)


def _stores(node: ast.AST, receiver: str | None) -> bool:
    """``self.x = ...`` or ``del self.x`` (not ``self.x[0] = ...``, a store into what ``x`` holds)."""
    return isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load) and _is(node.value, receiver)


def _is(node: ast.expr, receiver: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == receiver


def _tree(index: object, module: str) -> ast.Module | None:
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    return tree_of(module) if tree_of is not None else None


def _imports(index: object, module: str) -> dict[str, tuple[str, str]]:
    known = index.imports.get(module)  # type: ignore[attr-defined]
    if known is not None:
        return known
    tree = _tree(index, module)
    return scan.imported_names(tree) if tree is not None else {}
