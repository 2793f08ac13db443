"""GE: which attributes of the caller's object are submodules, whose call changes only the submodule itself.

A fork edge may go where no other work of the function changes the object's state the call reads
(``ge_given.state_untouched``). A call through the object, ``self.gate_proj(x)``, may be a method of the object
(anything of it may change) or a submodule's call (only that submodule may). It is the second where ``__init__``
assigns the attribute a torch.nn layer (``self.gate_proj = nn.Linear(...)``) or an instance of a class of the same
module, built from arguments that do not pass the object itself (a layer that holds its parent could change it),
called or made by a factory function of the run (``self.gate_proj = linear(d)``, ``factory_made.py``).
The ``__init__`` of a base class the run holds counts too, read in the base's own module (``class
MLA(MLAWeights)``, the weights assigned there, in this file or another: ``codegen/index/class_chain.py``), where no
method of a class below it stores the attribute (that store is what the object holds) and no other base assigns
it; a base of the package the run does not hold leaves the bases' attributes unknown (the class's own still count).
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import bases_of, class_of
from codegen.index.factory_made import made_by
from codegen.index.walked import walked_of

__all__ = ["submodules"]


def submodules(
    tree: ast.Module, qualname: str, receiver: str | None, *, index: object = None, module: str = ""
) -> frozenset[str]:
    """The attributes ``__init__`` of the caller's class, or of a base the run holds (``index``: the run, and
    ``module``: the caller's module in it), assigns a submodule (see above)."""
    owner = qualname.rpartition(".")[0]
    classes = _classes(tree)
    if receiver is None or owner not in classes:
        return frozenset()
    own = _layers(classes[owner], classes, index, module)
    if index is None:
        return own
    return own | _inherited(index, module, classes[owner], frozenset())


def _inherited(index: object, module: str, cls: ast.ClassDef, seen: frozenset[str]) -> frozenset[str]:
    """The submodules the bases of ``cls`` assign that ``cls`` stores nowhere itself; none where a base is unknown."""
    stored = _stored(cls)
    if "*" in stored or f"{module}:{cls.name}" in seen:
        return frozenset()
    per_base: list[frozenset[str]] = []
    for home in bases_of(index, module, cls):
        base = class_of(index, *home) if home is not None else None
        tree = _tree(index, home[0]) if home is not None else None
        if home is None or base is None or tree is None:
            return frozenset()  # a base the run does not hold: what it assigns is not known
        deeper = _inherited(index, home[0], base, seen | {f"{module}:{cls.name}"})
        per_base.append(_layers(base, _classes(tree), index, home[0]) | deeper)
    twice = {a for i, found in enumerate(per_base) for a in found if any(a in other for other in per_base[i + 1 :])}
    return frozenset().union(*per_base) - twice - stored


def _layers(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], index: object, module: str) -> frozenset[str]:
    """The attributes ``__init__`` of ``cls`` (of ``module``) assigns a torch.nn layer or a class of its module
    (``classes``), called or made by a factory of the run (``factory_made.py``)."""
    built = {attr: _made(index, module, made) for attr, made in _built(cls).items() if made is not None}
    return frozenset(
        attr
        for attr, (home, made) in built.items()
        if made.startswith(("nn.", "torch.nn.")) or (home == module and made in classes)
    )


def _made(index: object, module: str, called: str) -> tuple[str, str]:
    """(module, class as it spells it) that the call of ``called`` makes: a factory's class, or the name itself."""
    return (made_by(index, module, called) if index is not None else None) or (module, called)


def _tree(index: object, module: str) -> ast.Module | None:
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    return tree_of(module) if tree_of is not None else None


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}


def _built(cls: ast.ClassDef) -> dict[str, str | None]:
    """``self.attr = Layer(...)`` in ``__init__`` -> "Layer"; None where an argument reads ``self``, the call is of a
    name ``__init__`` binds, or the attribute is assigned more than once."""
    found: dict[str, str | None] = {}
    for fn in (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"):
        receiver, own = fn.args.args[0].arg if fn.args.args else None, scan.own_names(fn)
        for node in walked_of(fn, ast.stmt):
            for target in scan.assignment_targets(node):
                if isinstance(target, ast.Attribute) and _is(target.value, receiver):
                    found[target.attr] = None if target.attr in found else _layer(node, receiver, own)
    return found


def _stored(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes any method of ``cls`` stores on its object (``*``: a ``setattr`` on it)."""
    found: set[str] = set()
    for fn in scan.functions_of(cls):
        receiver = fn.args.args[0].arg if fn.args.args else None
        found |= {n.attr for n in walked_of(fn, ast.Attribute) if _is(n.value, receiver) and _stores(n)}
        calls = walked_of(fn, ast.Call)
        if any(scan.dotted_name(c.func) == "setattr" and c.args and _is(c.args[0], receiver) for c in calls):
            found.add("*")
    return frozenset(found)


def _stores(node: ast.Attribute) -> bool:
    return not isinstance(node.ctx, ast.Load)


def _layer(node: ast.stmt, receiver: str | None, own: frozenset[str]) -> str | None:
    """The name the stored value calls; None where it passes the object, or calls a name ``__init__`` binds itself
    (a parameter: any class, or any factory)."""
    value = getattr(node, "value", None)
    if not isinstance(value, ast.Call) or any(_is(n, receiver) for n in ast.walk(value)):
        return None
    called = scan.dotted_name(value.func)
    return called if called is not None and called.partition(".")[0] not in own else None


def _is(node: ast.AST, receiver: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == receiver
