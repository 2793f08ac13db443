"""What an object holds across the run's modules: the class of each submodule its class or a base assigns.

``class AscendDSAImpl(AttentionWeights)`` with ``from .weights import AttentionWeights``: the weights' ``__init__``
assigns ``self.kv_norm = RMSNorm(...)``, so ``self.kv_norm(x)`` in a method of the subclass is a submodule's call,
not a method's: it reads ``kv_norm`` only (``writes.reads_state``), and what it writes of its input is
``RMSNorm.forward``'s, read in the module that names ``RMSNorm`` (``imported_writes.py``), which the subclass's
module need not import. The bases are read where ``class_homes.py`` finds them. An attribute a class stores itself,
in any method, is that class's: a base's assignment does not hold there (a ``setattr`` on the object hides every
base's).

A submodule built by a factory function of the run (``self.up = linear(d)``, ``self.layers = nn.ModuleList(make(d)
for _ in range(n))``) holds the class the factory makes (``factory_made.py``). Every reader of what an object holds
asks :func:`submodule_classes` (or :func:`element_classes_made` for a layer list's elements), which answers with the
class and the module that names it, the factory already read, so no reader meets a factory's name as a class's.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_homes import Home, bases_of, class_of, home_of, homes_of, unheld_base
from codegen.index.elements import element_classes
from codegen.index.factory_made import made_by
from codegen.index.factory_submodules import factory_class
from codegen.index.per_index import per_run
from codegen.index.walked import per_node, walked_of

__all__ = [
    "Origins",
    "bases_of",
    "class_of",
    "element_classes_made",
    "forward_of",
    "home_of",
    "origins",
    "submodule_classes",
    "unheld_base",
    "unknown_attribute",
]

Origins = dict[str, tuple[str, str]]  # attribute -> (the run key of the module naming its class, the class name)


def submodule_classes(index: object, module: str, cls: ast.ClassDef) -> Origins:
    """The submodules of ``cls`` (a class of ``module``) that its ``__init__`` or a base's the run holds assigns,
    each with the module that names its class and the name, a factory of the run read as the class it makes; with no
    run (``index`` None, or a module it does not hold), the class's own ``__init__`` alone, as written."""
    own = {attr: (module, made) for attr, made in scan.submodule_assignments(cls).items()}
    if index is None or class_of(index, module, cls.name) is None:
        return own
    known = _classes(index)
    if (module, cls.name) not in known:
        known[(module, cls.name)] = _classes_of(index, module, cls.name)
    return dict(known[(module, cls.name)])


@per_run
def _classes(index: object) -> dict[Home, Origins]:
    return {}


def _classes_of(index: object, module: str, name: str) -> Origins:
    """``origins`` with each factory read as the class it makes, and the attributes a base builds by calling the
    factory this class hands it (``factory_submodules.py``)."""
    found = origins(index, module, name)
    handed = [attr for attr, (_, made) in found.items() if scan.own_call(made)]
    found |= {a: (module, made) for a in handed if (made := factory_class(index, module, name, a))}
    return {attr: made_by(index, *home) or home for attr, home in found.items()}


def element_classes_made(index: object, module: str, cls: ast.ClassDef) -> Origins:
    """The layer lists of ``cls`` (``codegen/index/elements.py``), each with the module that names the class of
    every element and the name, a factory of the run read as the class it makes."""
    found = {attr: (module, made) for attr, made in element_classes(cls).items()}
    return {attr: made_by(index, *home) or home for attr, home in found.items()} if index is not None else found


def origins(index: object, module: str, name: str) -> Origins:
    """The submodules of class ``name`` of ``module``, its bases' included, each with where its class is read (read
    once per class and run: each unresolved call of a submodule asks, ``forward_of``)."""
    known = _origins(index)
    if (module, name) not in known:
        known[(module, name)] = _origins_of(index, module, name)
    return dict(known[(module, name)])


@per_run
def _origins(index: object) -> dict[Home, Origins]:
    return {}


def _origins_of(index: object, module: str, name: str, seen: frozenset[Home] = frozenset()) -> Origins:
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
    ``factory_made.py``); ``("", "")`` where a base of the package the run does not hold may assign it (nothing is
    known of that call); None where no base of the run assigns it, or its class comes from outside the package."""
    cls = class_of(index, module, owner)
    found = submodule_classes(index, module, cls).get(attr) if cls is not None else None
    if found is None:
        own = cls is not None and attr in {f.name for f in scan.functions_of(cls)}
        return ("", "") if not own and unheld_base(index, module, owner) else None
    homes = list(homes_of(index, *found))
    if not homes:
        return None
    return ("", "") if homes[0] is None else (homes[0][0], f"{homes[0][1]}.forward")


def unknown_attribute(index: object, module: str, owner: str, attr: str) -> bool:
    """Some method of class ``owner`` of ``module``, or of a base the run holds, stores ``self.<attr>`` (or calls
    ``setattr`` on its object), and no ``__init__`` says of which class (``MoE() if moe else MLP()``, a parameter
    called): the attribute may hold any object."""
    cls = class_of(index, module, owner)
    made = submodule_classes(index, module, cls).get(attr) if cls is not None else None
    return (made is None or scan.own_call(made[1])) and _stores(index, module, owner, attr)


def _stores(index: object, module: str, owner: str, attr: str, seen: frozenset[Home] = frozenset()) -> bool:
    cls = class_of(index, module, owner)
    if cls is None or (module, owner) in seen:
        return False
    if attr in _stored(cls) or "*" in _stored(cls):
        return True
    homes = [h for h in bases_of(index, module, cls) if h is not None]
    return any(_stores(index, *h, attr, seen | {(module, owner)}) for h in homes)


@per_node
def _stored(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes any method of ``cls`` stores on its object (``*``: ``setattr`` on it); read once per class."""
    found: set[str] = set()
    for fn in scan.functions_of(cls):
        receiver = fn.args.args[0].arg if fn.args.args else None
        found |= {n.attr for n in walked_of(fn, ast.Attribute) if _stores_on(n, receiver)}
        calls = walked_of(fn, ast.Call)
        if any(scan.dotted_name(c.func) == "setattr" and c.args and _is(c.args[0], receiver) for c in calls):
            found.add("*")
    return frozenset(found)


def _stores_on(node: ast.AST, receiver: str | None) -> bool:
    """``self.x = ...`` or ``del self.x`` (not ``self.x[0] = ...``, a store into what ``x`` holds)."""
    return isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load) and _is(node.value, receiver)


def _is(node: ast.expr, receiver: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == receiver
