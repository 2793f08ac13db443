"""Which classes a class of the run derives from, and whether the run reads every one of them.

``class Model(ExtBase)`` with ``from extlib import ExtBase``: the run reads ``Model`` but not ``ExtBase``, whose
methods may write or store any attribute of the object (``unread_methods.py``, ``scalar_attributes.py``). A base is
read where the run holds its module (the caller's module, or one a name is imported from, re-exports followed);
torch's classes (``nn.Module``, ``nn.Linear``) are known without reading them here: which of their methods write
their module's state is read from torch's sources (``torch_module_methods.py``). A base of the caller's own package
in a module the run does not hold (a file transformed alone) is read from disk for its facts
(``codegen/driver/sibling_files.py``); one neither the run nor the disk holds is unread too: safety does not
depend on which files a run holds. A name the module that should define it does not bind (``from .base import
Base`` where the run holds the package's ``__init__.py`` but no ``base.py``: ``base`` is a submodule, not a name of
the ``__init__``) is unread as well.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import class_of
from codegen.lower.flow.exprs import scope_nodes
from codegen.lower.flow.imported_writes import ModuleFunctions, module_functions

__all__ = ["read_chain", "unread_bases", "unread_class"]

_KNOWN = frozenset({"torch", "torch_npu"})  # whose classes are known without reading them
_DEPTH = 8  # bases followed one inside another at most; a deeper chain is unread


def unread_class(functions: ModuleFunctions, dotted: str, depth: int = 0) -> bool:
    """The class (or factory) ``dotted`` names in the module of ``functions`` may run methods the run cannot read:
    a name imported from outside the run but torch's (a module of the caller's package the run lacks too), a
    function of the module (a factory: no class is named), or a class of the run with such a base."""
    root, *rest = dotted.split(".")
    if depth >= _DEPTH:
        return True
    if class_of(functions.index, functions.key, root) is not None and not rest:
        return unread_bases(functions, root, depth + 1)
    bound = functions.binding(root)
    if bound is None and rest:  # an attribute of what the module does not bind: a submodule of a package, unread
        return True
    if bound is None:  # a factory of the module; a builtin or a local names no object of this kind
        return root in functions and _unread_factory(functions, functions[root], depth)
    return _unread_import(functions, (*bound, *rest), depth)


def _unread_factory(functions: ModuleFunctions, fn: ast.FunctionDef | ast.AsyncFunctionDef, depth: int) -> bool:
    """A function of the module making the object may make one of a class the run cannot read: unless every value
    it returns is a call of a class the run reads or knows (``def _linear(n): return nn.Linear(n, n)``)."""
    returns = [node for node in scope_nodes(fn) if isinstance(node, ast.Return)]
    if fn.decorator_list or not returns:
        return True
    return any(_unread_made(functions, r.value, depth) for r in returns)


def _unread_made(functions: ModuleFunctions, value: ast.expr | None, depth: int) -> bool:
    dotted = scan.dotted_name(value.func) if isinstance(value, ast.Call) else None
    return dotted is None or unread_class(functions, dotted, depth + 1)


def unread_bases(functions: ModuleFunctions, owner: str, depth: int = 0) -> bool:
    """Some base of class ``owner`` of the module, or of its bases, is a class the run cannot read (see above)."""
    cls = class_of(functions.index, functions.key, owner)
    if cls is None:
        return False
    return any(_unread_base(functions, base, depth) for base in cls.bases)


def read_chain(functions: ModuleFunctions, owner: str) -> list[ast.ClassDef] | None:
    """Class ``owner`` of the module and its bases of the run, where the run reads every base (torch's aside)."""
    cls = class_of(functions.index, functions.key, owner)
    if cls is None or unread_bases(functions, owner):
        return None
    found = [cls]
    for base in cls.bases:
        home = _home(functions, scan.dotted_name(base) or "")
        found += (read_chain(*home) or []) if home is not None else []
    return found


def _home(functions: ModuleFunctions, dotted: str) -> tuple[ModuleFunctions, str] | None:
    """The module of the run that defines the class ``dotted`` names, and its name there."""
    root, *rest = dotted.split(".")
    if class_of(functions.index, functions.key, root) is not None and not rest:
        return functions, root
    bound = functions.binding(root)
    held = _held(functions, (*bound, *rest)) if bound is not None else None
    return _home(*held) if held is not None and held[0] is not functions else None


def _unread_base(functions: ModuleFunctions, base: ast.expr, depth: int) -> bool:
    dotted = scan.dotted_name(base)
    return dotted is None or unread_class(functions, dotted, depth)


def _unread_import(functions: ModuleFunctions, dotted: tuple[str, ...], depth: int) -> bool:
    """``dotted`` (absolute) names a class outside the run and torch, or a class of the run with such a base."""
    if dotted[0] in _KNOWN:
        return False
    held = _held(functions, dotted)
    if held is not None:
        return unread_class(*held, depth=depth + 1)
    return True


def _held(functions: ModuleFunctions, dotted: tuple[str, ...]) -> tuple[ModuleFunctions, str] | None:
    """The longest module of ``dotted`` the run holds, and the rest of the name there."""
    for cut in range(len(dotted) - 1, 0, -1):
        key = functions.index.key_of(".".join(dotted[:cut]))  # type: ignore[attr-defined]
        tree = functions.index.returns.tree_of(key)  # type: ignore[attr-defined]
        if tree is not None:
            return module_functions(functions.index, key, tree), ".".join(dotted[cut:])
    return None
