"""Transform a model's classes in-process: new module objects, same instances.

The user's files are never written. Each module defining a class of the model
whose source mentions ``npudsl`` is transformed once per target, compiled with
line numbers mapped back to the original file (so tracebacks and the race
checker's messages name the user's lines), executed in a fresh module object, and
every instance of a class from it gets the transformed class of the same qualname.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import sys
import types
import warnings
from typing import Any

from npudsl.errors import NpudslError

__all__ = ["line_map", "swap_classes", "transformed_module"]

_CACHE: dict[tuple[str, str], types.ModuleType] = {}
_MARK = "__npudsl_target__"


def _transform(source: str, path: str, target: str, module_name: str) -> str:
    from codegen.api import TransformError, transform_source

    try:
        return transform_source(source, path=path, target=target, module_name=module_name)
    except TransformError as error:
        raise NpudslError(f"cannot transform {path} for target {target!r}:\n{error}") from error


def line_map(original: str, transformed: str) -> list[int]:
    """``result[n]``: the original line that transformed line ``n`` (1-based) stands for.

    Lines equal up to indentation map to each other; inserted lines map to the
    original line they precede (the last line at the end of the file).
    """
    old = [line.strip() for line in original.splitlines()]
    new = [line.strip() for line in transformed.splitlines()]
    result = [1] * (len(new) + 2)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(j2 - j1):
            nearest = i1 + k if tag == "equal" else min(i1 + k, max(i2 - 1, i1))
            result[j1 + k + 1] = min(nearest + 1, max(len(old), 1))
    result[-1] = result[-2] if len(result) > 2 else 1
    return result


def _compile(transformed: str, original: str, path: str) -> types.CodeType:
    tree = ast.parse(transformed, filename=path)
    mapping = line_map(original, transformed)
    for node in ast.walk(tree):
        if "lineno" in node._attributes:
            node.lineno = mapping[min(node.lineno, len(mapping) - 1)]
            end = getattr(node, "end_lineno", None)
            node.end_lineno = mapping[min(end, len(mapping) - 1)] if end is not None else None
    return compile(tree, path, "exec")


def _module_name(module: types.ModuleType) -> str:
    if module.__name__ != "__main__":
        return module.__name__
    return inspect.getmodulename(module.__file__ or "__main__") or "__main__"


def _execute(module: types.ModuleType, target: str, transformed: str, original: str, path: str) -> types.ModuleType:
    fresh = types.ModuleType(f"{module.__name__}__npudsl_{target}")
    fresh.__file__, fresh.__package__ = path, module.__package__
    setattr(fresh, _MARK, target)
    sys.modules[fresh.__name__] = fresh
    exec(_compile(transformed, original, path), fresh.__dict__)  # noqa: S102 - the user's module, as an import would
    return fresh


def transformed_module(module: types.ModuleType, target: str) -> types.ModuleType:
    """The module's source transformed for ``target`` and executed in a new module (cached).

    A module the transformer leaves unchanged is returned as it is.
    """
    key = (module.__name__, target)
    if key not in _CACHE:
        original = inspect.getsource(module)
        path = inspect.getsourcefile(module) or module.__name__
        transformed = _transform(original, path, target, _module_name(module))
        _CACHE[key] = module if transformed == original else _execute(module, target, transformed, original, path)
    return _CACHE[key]


def _transformable(cls: type) -> types.ModuleType | None:
    module = sys.modules.get(cls.__module__)
    if module is None or getattr(module, _MARK, None) or cls.__module__.split(".")[0] == "torch":
        return None
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return None
    return module if "npudsl" in source else None


def _counterpart(cls: type, module: types.ModuleType) -> type | None:
    if "<locals>" in cls.__qualname__:
        warnings.warn(f"npudsl: {cls.__qualname__} is defined inside a function; it runs untransformed", stacklevel=3)
        return None
    found: Any = module
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    return found if isinstance(found, type) else None


def swap_classes(model: Any, target: str) -> int:
    """Give every submodule whose class comes from a transformed module its transformed class; return how many."""
    swapped = 0
    for sub in model.modules():
        module = _transformable(type(sub))
        new_class = module and _counterpart(type(sub), transformed_module(module, target))
        if new_class is not None:
            sub.__class__ = new_class
            swapped += 1
    return swapped
