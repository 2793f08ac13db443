"""The return annotations of the run's module-level functions, for the modules of the run that import them.

GE orders a user event on a returned tensor, and a fork on two tensors, only where each is certainly a tensor
(``codegen/lower/flow/tensors.py``); a function says what it returns by its annotation (``def grouped_matmul(...)
-> torch.Tensor``), and a caller in another module sees it when it imports the function by name (``from .ops
import grouped_matmul``) and both files are in the run. A file transformed alone sees none of another file's
functions: its calls of them stay uncertain, and GE keeps the token there (safety never depends on which files
are in a run).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable, Mapping

from codegen.index import scan
from codegen.lower.flow.imports import resolve_spec

__all__ = ["function_returns", "imported_relatively", "imported_returns"]


def function_returns(tree: ast.Module) -> dict[str, str]:
    """Each module-level function defined once, with its return annotation as written (none: left out)."""
    defined = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    once = Counter(n.name for n in defined)
    return {n.name: ast.unparse(n.returns) for n in defined if n.returns is not None and once[n.name] == 1}


def imported_relatively(trees: Iterable[ast.Module]) -> frozenset[str]:
    """The names the modules import from their own package (``from .experts import grouped_matmul``): the run's
    index reads the files that name them too, so that it knows what those functions return."""
    return frozenset(
        name for tree in trees for spec, name in scan.imported_names(tree).values() if spec.startswith(".")
    )


def imported_returns(index: object, module: str) -> dict[str, ast.expr]:
    """The annotations of the run's functions that ``module`` imports by name, by the name it calls them."""
    imports: Mapping[str, tuple[str, str]] = index.imports.get(module, {})  # type: ignore[attr-defined]
    returns: Mapping[str, Mapping[str, str]] = index.returns  # type: ignore[attr-defined]
    found: dict[str, ast.expr] = {}
    for local, (spec, name) in imports.items():
        key = index.key_of(resolve_spec(spec, index.package_of(module)))  # type: ignore[attr-defined]
        annotation = returns.get(key, {}).get(name)
        if annotation is not None:
            found[local] = ast.parse(annotation, mode="eval").body
    return found
