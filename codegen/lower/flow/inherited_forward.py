"""Which ``forward`` an instance of a class of the run runs where the class inherits it from a base of the run.

GE reads a submodule's ``forward`` for what a recording body's returned call makes (``called_function.py``) and
for what calling the submodule returns (``codegen/index/returns.py``). Both read ``Class.forward`` as the module
defines it, so ``class Skip(Pass): pass`` had none: its annotation was unknown (the token stayed ``record()``), and
had it been known, a ``forward`` returning its input as it came would have made the caller's tensor the token.
The class chain is followed here as Python's method resolution finds ``forward`` on a chain of single bases: the
class's own ``forward``, else its one base's (``nn.Module`` itself defines none that runs), where the run holds
each class (``codegen/index/class_chain.py``: this module, another of the run, or the package's file on disk). A
class with two bases other than ``nn.Module`` (the order of their ``forward``s is the MRO's), a base the run does not
hold, one from another package (``nn.Linear``: torch's own ``forward``), or a decorated class on the way (a stream
class switches streams) leaves it unknown.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import bases_of, class_of, forward_of, home_of
from codegen.index.factory_submodules import factory_class

__all__ = ["class_forward", "submodule_class"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_MODULE = frozenset({"Module", "nn.Module", "torch.nn.Module"})  # ``nn.Module``: no ``forward`` of its own runs
_DEPTH = 16  # bases followed; deeper, unknown


def class_forward(index: object, module: str, name: str) -> tuple[str, str, ast.Module, _Function] | None:
    """(module, the class that defines it, the module's tree, the method) of the ``forward`` an instance of class
    ``name`` of ``module`` runs (see above); None where it is not known."""
    for _ in range(_DEPTH):
        cls, tree = class_of(index, module, name), _tree(index, module)
        if cls is None or tree is None or cls.decorator_list:
            return None
        own = [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == "forward"]
        if own:
            found = scan.functions_by_qualname(tree).get(f"{name}.forward")
            return (module, name, tree, found) if len(own) == 1 and found is own[0] else None
        base = _one_base(index, module, cls)
        if base is None:
            return None
        module, name = base
    return None


def submodule_class(index: object, module: str, owner: str, attr: str) -> tuple[str, str] | None:
    """(module, class) of the submodule ``self.<attr>`` holds in a method of class ``owner`` of ``module``, as
    ``codegen/index/submodule_forward.py`` finds it (a factory ``__init__`` is handed, or an assignment of the class
    or of a base); None where it is not known."""
    made = factory_class(index, module, owner, attr)
    home = home_of(index, module, made) if made is not None else None
    if home is not None:
        return home
    found = forward_of(index, module, owner, attr)  # a factory function handed to the base, too
    return (found[0], found[1].rpartition(".")[0]) if found is not None and found[0] else None


def _one_base(index: object, module: str, cls: ast.ClassDef) -> tuple[str, str] | None:
    """The one base of ``cls`` other than ``nn.Module``, where the run holds it."""
    others = [b for b in cls.bases if scan.dotted_name(b) not in _MODULE]
    if len(others) != 1 or cls.keywords:
        return None
    homes = list(bases_of(index, module, cls))
    return homes[0] if len(homes) == 1 else None


def _tree(index: object, module: str) -> ast.Module | None:
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    return tree_of(module) if tree_of is not None else None
