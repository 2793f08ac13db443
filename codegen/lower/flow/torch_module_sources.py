"""The classes of ``torch.nn.modules`` in the installed torch, read once for the table builders that ask about them.

``torch_module_methods_build.py`` (which methods write their module's state, which run its children),
``torch_layer_reads_build.py`` (which inputs a ``forward`` surely reads) and ``torch_layer_writes_build.py`` (which
it writes in place) all walk every file of the package; they used to parse it each on its own. One reading serves
them all: each class by its name (the first file defining it, in
sorted order), its bases' names, its own methods, the annotations its body gives its attributes (``_modules:
dict[str, Optional["Module"]]``, ``_forward_hooks: dict[int, Callable]``), and the facts of its file: the names the
file binds to a module of torch (``F``, ``_VF``) and its top-level functions (``_get_clones``, which returns a
``ModuleList``).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Mapping

import attrs

from codegen.index.scan import dotted_name
from codegen.lower.flow.table_files import torch_source

__all__ = ["TorchClass", "TorchFile", "torch_classes"]


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
    """Each class of ``torch.nn.modules`` by its name (the first file defining it, files in sorted order)."""
    found: dict[str, TorchClass] = {}
    for path in sorted(torch_source("nn", "modules").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
        file = TorchFile(_torch_modules(tree), functions)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, _class(node, file))
    return found


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
