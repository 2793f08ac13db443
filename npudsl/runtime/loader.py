"""Transform a model's classes in-process: the same run ``npudsl transform`` makes, the user's model kept theirs.

The files of the run are the packages the model's classes come from (the whole top-level package of
each, or the single file of a module outside any package): exactly what ``npudsl transform <root>``
sees, so the same calls are joined the same way. The transformed modules are new module objects
(:mod:`npudsl.runtime._package`: only definitions run again, a script's top level never does), and each
instance of a transformed class gets a subclass of its own class carrying the transformed methods
(:mod:`npudsl.runtime._shadow`). The user's files and modules are never changed.
"""

from __future__ import annotations

import inspect
import os
import sys
import types
from typing import Any

from npudsl.errors import NpudslError
from npudsl.runtime._package import build_modules, line_map
from npudsl.runtime._shadow import shadow_class

__all__ = ["line_map", "run_roots", "swap_classes", "transformed_sources"]

# (roots, target, modules) -> (the modules, held so the ids in the key stay theirs; user class -> twin)
_CACHE: dict[tuple[tuple[str, ...], str, tuple[str, ...]], tuple[list[types.ModuleType], dict[type, type]]] = {}


def _file(module: types.ModuleType) -> str | None:
    path = getattr(module, "__file__", None)
    return os.path.realpath(path) if path and path.endswith(".py") and os.path.isfile(path) else None


def _root(path: str) -> str:
    """The top-level package folder that holds ``path``, or the file itself outside any package."""
    folder, root = os.path.dirname(path), path
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        root, folder = folder, os.path.dirname(folder)
    return root


def _user_module(cls: type) -> types.ModuleType | None:
    cls = vars(cls).get("__npudsl_original__", cls)  # a class already swapped counts as the user's own
    module = sys.modules.get(cls.__module__)
    if module is None or cls.__module__.split(".")[0] in ("torch", "npudsl"):
        return None
    return module if _file(module) else None


def _model_modules(model: Any) -> list[types.ModuleType]:
    modules = {id(m): m for m in (_user_module(type(sub)) for sub in model.modules()) if m is not None}
    return list(modules.values())


def run_roots(model: Any) -> tuple[str, ...]:
    """The roots of the run for ``model``: its classes' packages (or files)."""
    return tuple(sorted({_root(path) for module in _model_modules(model) if (path := _file(module)) is not None}))


def transformed_sources(roots: tuple[str, ...], target: str) -> list[tuple[str, str, str]]:
    """``(path, original, transformed)`` for each file the run over ``roots`` changes; errors raise."""
    from codegen.driver.run import discover, read_sources, run

    results = run(read_sources(discover(roots)), target=target, jobs=1)
    errors = [d.format() for r in results if r.has_errors for d in r.diagnostics]
    internal = [r.internal_error for r in results if r.internal_error]
    if errors or internal:
        detail = "\n".join(errors) or internal[0]
        raise NpudslError(f"cannot transform {', '.join(roots)} for target {target!r}:\n{detail}")
    return [
        (os.path.realpath(r.file.path), r.file.source or "", r.code)
        for r in results
        if r.changed and r.code is not None
    ]


def _loaded_by_file(model_modules: list[types.ModuleType]) -> dict[str, types.ModuleType]:
    """The loaded module of each file; where a file is loaded under several names, the model's own."""
    found = {path: module for module in model_modules if (path := _file(module)) is not None}
    for module in list(sys.modules.values()):
        path = _file(module) if isinstance(module, types.ModuleType) else None
        if path is not None and not module.__name__.endswith(_SUFFIX_MARK):
            found.setdefault(path, module)
    return found


_SUFFIX_MARK = "__npudsl"


def _twins(roots: tuple[str, ...], target: str, model_modules: list[types.ModuleType]) -> dict[type, type]:
    """User class -> its shadow subclass, for every class the run transforms (cached per run and modules:
    a module run again, as a reloaded file is, has new classes and gets new twins)."""
    key = (roots, target, tuple(sorted(f"{module.__name__}@{id(module)}" for module in model_modules)))
    if key not in _CACHE:
        loaded = _loaded_by_file(model_modules)
        found = [
            (loaded[path], original, code, path)
            for path, original, code in transformed_sources(roots, target)
            if path in loaded
        ]
        made = build_modules(found, suffix=f"{_SUFFIX_MARK}_{target}")
        users = {module.__name__: module for module, _, _, _ in found}
        transformed = {cls: twin for name, module in made.items() for cls, twin in _classes(users[name], module)}
        _CACHE[key] = (model_modules, {cls: shadow_class(cls, transformed) for cls in transformed})
    return _CACHE[key][1]


def _classes(user: types.ModuleType, module: types.ModuleType) -> list[tuple[type, type]]:
    """(user class, transformed class) pairs of one module, nested classes included."""
    pairs = []
    for name, value in vars(user).items():
        twin = vars(module).get(name)
        if inspect.isclass(value) and value.__module__ == user.__name__ and inspect.isclass(twin) and twin is not value:
            pairs.append((value, twin))
    return pairs


def swap_classes(model: Any, target: str) -> int:
    """Give every submodule whose class the run transforms its class's transformed subclass; return how many."""
    modules = _model_modules(model)
    if not modules:
        return 0
    shadows = _twins(run_roots(model), target, modules)
    swapped = 0
    for sub in model.modules():
        shadow = shadows.get(vars(type(sub)).get("__npudsl_original__", type(sub)))
        if shadow is not None:
            sub.__class__ = shadow
            swapped += 1
    return swapped
