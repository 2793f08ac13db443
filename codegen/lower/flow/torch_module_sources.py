"""The classes of ``torch.nn.modules`` in the installed torch, read once for the table builders that ask about them.

``torch_module_methods_build.py`` (which methods write their module's state, which run its children),
``torch_layer_reads_build.py`` (which inputs a ``forward`` surely reads) and ``torch_layer_writes_build.py`` (which
it writes in place) all walk every file of the package; they used to parse it each on its own. One reading serves
them all: each class by its name (the one ``torch.nn`` exports by it: ``_functions.py``'s autograd ``Function``
``SyncBatchNorm`` is not the layer; else the first file defining it, in sorted order), its bases' names, its own
methods, the annotations its body gives its attributes (``_modules: dict[str, Optional["Module"]]``,
``_forward_hooks: dict[int, Callable]``), and the facts of its file: the names the file binds to a module of torch
(``F``, ``_VF``) and its top-level functions (``_get_clones``, which returns a ``ModuleList``). The walk up a
class's bases to the one defining a method (:func:`defining_class`) is written here once, for these classes
(:func:`method_home`) and for the tables read back at transform time (``torch_module_methods.py``).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Callable, Mapping, Sequence

import attrs

from codegen.index.scan import dotted_name
from codegen.lower.flow.table_files import torch_source

__all__ = ["TorchClass", "TorchFile", "defining_class", "inherited_method", "method_home", "torch_classes"]

_DEPTH = 16  # bases followed one inside another at most
_Bases = Callable[[str], Sequence[str]]  # a class's name -> its bases' names (none for a class not known)


@attrs.frozen
class TorchFile:
    """A file of the package: the names it binds at its top to a module of torch, and its top-level functions."""

    torch_modules: frozenset[str]
    functions: Mapping[str, ast.FunctionDef]


@attrs.frozen
class TorchClass:
    """A class of the package: its bases' names, its own methods, its body's attribute annotations, its file."""

    bases: tuple[str, ...]
    methods: Mapping[str, ast.FunctionDef]
    annotations: Mapping[str, ast.expr]
    file: TorchFile


@functools.cache
def torch_classes() -> dict[str, TorchClass]:
    """Each class of ``torch.nn.modules`` by its name: where the package's ``__init__.py`` imports the name from,
    the class that file defines (``nn.SyncBatchNorm`` is ``batchnorm.py``'s, not the autograd ``Function`` of the
    same name in ``_functions.py``); any other, the first file defining it, files in sorted order."""
    folder = torch_source("nn", "modules")
    exported = _exported(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
    found: dict[str, TorchClass] = {}
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
        file = TorchFile(_torch_modules(tree), functions)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and exported.get(node.name, path.stem) == path.stem:
                found.setdefault(node.name, _class(node, file))
    return found


def _exported(init: ast.Module) -> dict[str, str]:
    """Each name the package's ``__init__.py`` imports from a module of the package, with that module's name."""
    imports = [n for n in init.body if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module]
    return {a.asname or a.name: str(n.module) for n in imports for a in n.names}


def defining_class(cls: str, defines: Callable[[str], bool], bases: _Bases) -> str | None:
    """The class among ``cls`` and its bases that ``defines`` holds for: itself first, then each base and its own
    bases in turn, as Python looks up a method along single bases (torch's module classes); None where none does
    within ``_DEPTH`` levels. ``bases`` gives a class's bases' names (none for a class it does not know)."""
    return _defining(cls, defines, bases, 0)


def _defining(cls: str, defines: Callable[[str], bool], bases: _Bases, depth: int) -> str | None:
    if depth > _DEPTH:
        return None
    if defines(cls):
        return cls
    return next((d for b in bases(cls) if (d := _defining(b, defines, bases, depth + 1)) is not None), None)


def method_home(classes: Mapping[str, TorchClass], cls: str, name: str) -> str | None:
    """The class among ``cls`` and its bases in ``classes`` defining the method ``name`` (:func:`defining_class`)."""
    return defining_class(
        cls,
        lambda c: c in classes and name in classes[c].methods,
        lambda c: classes[c].bases if c in classes else (),
    )


def inherited_method(classes: Mapping[str, TorchClass], cls: str, name: str) -> tuple[str, ast.FunctionDef] | None:
    """The method ``name`` an object of ``cls`` runs, with the class defining it (:func:`method_home`)."""
    home = method_home(classes, cls, name)
    return (home, classes[home].methods[name]) if home is not None else None


def _class(node: ast.ClassDef, file: TorchFile) -> TorchClass:
    bases = tuple((dotted_name(b) or "").rpartition(".")[2] for b in node.bases)
    methods = {f.name: f for f in node.body if isinstance(f, ast.FunctionDef)}
    annotated = [s for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    annotations = {s.target.id: s.annotation for s in annotated if isinstance(s.target, ast.Name)}
    return TorchClass(bases, methods, annotations, file)


def _torch_modules(tree: ast.Module) -> frozenset[str]:
    """The names the file binds at its top to a module of torch (``torch``, ``F``, ``_VF``)."""
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {a.asname or a.name.partition(".")[0] for a in node.names if a.name.partition(".")[0] == "torch"}
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("torch"):
            found |= {a.asname or a.name for a in node.names if _is_module(f"{node.module}.{a.name}")}
    return frozenset(found)


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False
