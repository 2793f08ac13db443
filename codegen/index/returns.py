"""The return annotations of the run's module-level functions, for the modules of the run that import them.

GE orders a user event on a returned tensor, and a fork on two tensors, only where each is certainly a tensor
(``codegen/lower/flow/tensors.py``); a function says what it returns by its annotation (``def grouped_matmul(...)
-> torch.Tensor``), and a caller in another module sees it when it imports the function by name (``from .ops
import grouped_matmul``) and both files are in the run. A file transformed alone sees none of another file's
functions: its calls of them stay uncertain, and GE keeps the token there (safety never depends on which files
are in a run). The same facts say which functions return a parameter as it came (``returned.py``, under
``name + PARAM``): :func:`param_returned` reads them as a caller sees them.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable, Mapping

from codegen.index import scan
from codegen.index.class_chain import home_of as class_home
from codegen.index.returned import PARAM, returned_params
from codegen.lower.flow.imports import resolve_spec
from codegen.lower.flow.inherited_forward import class_forward

__all__ = [
    "function_returns",
    "home_of",
    "imported_relatively",
    "imported_returns",
    "param_returned",
    "run_returns",
    "submodule_returns",
]


def function_returns(tree: ast.Module) -> dict[str, str]:
    """Each module-level function defined once (``f``), and each class's ``forward`` (``Linear.forward``: calling
    the module calls it), with its return annotation as written (none: left out); and the functions that return a
    parameter as it came (``returned.py``)."""
    found = {**_annotated(tree.body, ""), **returned_params(tree)}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        found.update({k: v for k, v in _annotated(cls.body, f"{cls.name}.").items() if k.endswith(".forward")})
    return found


def _annotated(body: list[ast.stmt], prefix: str) -> dict[str, str]:
    defined = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    once = Counter(n.name for n in defined)
    return {prefix + n.name: ast.unparse(n.returns) for n in defined if n.returns is not None and once[n.name] == 1}


def imported_relatively(trees: Iterable[ast.Module]) -> frozenset[str]:
    """The names the modules import from their own package (``from .experts import grouped_matmul``): the run's
    index reads the files that name them too, so that it knows what those functions return."""
    return frozenset(
        name for tree in trees for spec, name in scan.imported_names(tree).values() if spec.startswith(".")
    )


def run_returns(
    index: object, module: str, tree: ast.Module, owner: str | None, receiver: str | None
) -> dict[str, ast.expr]:
    """What a function of ``module`` (a method of ``owner``, called on ``receiver``) can see of the run's return
    annotations: the functions it imports, and its object's submodules (``codegen/lower/flow/tensors.py``)."""
    found = imported_returns(index, module)
    classes = [c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == owner]
    if classes and receiver is not None:
        found |= submodule_returns(index, module, classes[0], receiver)
    return found


def imported_returns(index: object, module: str) -> dict[str, ast.expr]:
    """The annotations of the run's functions that ``module`` imports by name, by the name it calls them."""
    found: dict[str, ast.expr] = {}
    for local in index.imports.get(module, {}):  # type: ignore[attr-defined]
        annotation = _defined(index, module, local, "")
        if annotation is not None:
            found[local] = ast.parse(annotation, mode="eval").body
    return found


def param_returned(index: object, module: str, name: str) -> tuple[int, str] | None:
    """The parameter (its position among the positional ones, -1 for a keyword-only one, and its name) that the
    function ``module`` calls ``name`` returns as it came, where the run knows it (defined there, or imported by
    name from a file of the run)."""
    fact = _defined(index, module, name, PARAM)
    if fact is None:
        return None
    position, _, param = fact.partition(" ")
    return int(position), param


def submodule_returns(index: object, module: str, cls: ast.ClassDef, receiver: str) -> dict[str, ast.expr]:
    """What calling each submodule of ``cls`` returns (``self.proj`` -> its class's ``forward`` annotation), for
    the submodules its ``__init__`` or a base class of the run assigns (``class MLA(MLAWeights)``, the weights in
    another file), where the submodule's class is in the run."""
    owners = [(module, cls.name)] + [(home_of(index, module, b.id), b.id) for b in cls.bases if isinstance(b, ast.Name)]
    assigned: dict[str, tuple[str, str]] = {}
    for home, name in reversed(owners):  # the class's own assignment wins over a base's
        attrs = index.submodules.get(f"{home}:{name}", {})  # type: ignore[attr-defined]
        assigned.update({attr: (home, made) for attr, made in attrs.items()})
    found: dict[str, ast.expr] = {}
    for attr, (home, made) in assigned.items():
        annotation = _defined(index, home, made, ".forward") or _inherited_forward(index, home, made)
        if annotation is not None:
            found[f"{receiver}.{attr}"] = ast.parse(annotation, mode="eval").body
    return found


def _inherited_forward(index: object, module: str, name: str) -> str | None:
    """The annotation of the ``forward`` class ``name`` (as ``module`` names it) inherits from a base of the run."""
    home = class_home(index, module, name)
    found = class_forward(index, *home) if home is not None else None
    returns: Mapping[str, Mapping[str, str]] = index.returns  # type: ignore[attr-defined]
    return None if found is None else returns.get(found[0], {}).get(f"{found[1]}.forward")


def home_of(index: object, module: str, name: str) -> str:
    """The run key of the module that defines ``name`` as ``module`` sees it: itself, or where it imports it from."""
    imported = index.imports.get(module, {}).get(name)  # type: ignore[attr-defined]
    if imported is None:
        return module
    return index.key_of(resolve_spec(imported[0], index.package_of(module)))  # type: ignore[attr-defined]


def _defined(index: object, module: str, name: str, suffix: str) -> str | None:
    """The annotation of ``name + suffix`` where ``module`` finds ``name``: defined there, or imported by name."""
    returns: Mapping[str, Mapping[str, str]] = index.returns  # type: ignore[attr-defined]
    imported = index.imports.get(module, {}).get(name)  # type: ignore[attr-defined]
    original = imported[1] if imported is not None else name
    return returns.get(home_of(index, module, name), {}).get(original + suffix)
