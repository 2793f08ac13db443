"""Which model and which inputs a run captures: ``--model`` and ``--inputs``.

Each names something in the model's file (``NAME``), in another file
(``FILE.py:NAME``) or in an importable module (``package.module:NAME``). A model
is a class whose constructor needs no arguments, or a function that returns the
model: every Hugging Face class takes a ``config``, so ``make_model()`` builds it
without editing the modeling file. What the user's code raises, and a class that
needs arguments, is one positioned line with a hint (:mod:`npudsl.timeline.user_code`).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import types
from collections.abc import Callable
from typing import Any

import torch

from npudsl.errors import NpudslError
from npudsl.timeline.user_code import position, run_user

__all__ = ["pick_model", "resolve_inputs"]

_MAKE = "pass --model FILE.py:make_model (or package.module:make_model), a function that returns the model"


def _named(module: types.ModuleType, spec: str, flag: str) -> tuple[Any, str, str]:
    """What ``spec`` names, the file it is in, and its name."""
    from npudsl.timeline.capture import load_example

    path = str(module.__file__)
    if ":" not in spec:
        return getattr(module, spec, None), path, spec
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise NpudslError(f"{flag} {spec}: no such file {where}")
        return getattr(load_example(where), name, None), where, name
    other = run_user(where, f"importing {where}", f"check {flag} {spec}", lambda: _import(where, f"{flag} {spec}"))
    return getattr(other, name, None), str(getattr(other, "__file__", where)), name


def _import(dotted: str, option: str) -> types.ModuleType:
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError as exc:
        if exc.name and dotted.startswith(exc.name):  # the module itself is missing, not one it imports
            raise NpudslError(f"{option}: cannot import {dotted}: {exc}") from None
        raise


def resolve_inputs(module: types.ModuleType, path: str, spec: str | None) -> Callable[[], tuple[Any, ...]]:
    """The function that makes the inputs (default ``example_inputs`` in ``path``), returning a tuple."""
    found, where, name = _named(module, spec or "example_inputs", "--inputs")
    if not callable(found):
        raise NpudslError(
            f"{position(where, 1)}: defines no function {name}(); the graph is captured on its "
            "inputs (pass --inputs FUNC, FILE.py:FUNC or package.module:FUNC)"
        )
    hint = f"{name}() must return the model's inputs, a tuple of tensors"
    return lambda: tuple(run_user(where, f"making the inputs ({name}())", hint, found))


def _needs(called: Any) -> list[str]:
    """The parameters ``called()`` leaves without a value (none known: none)."""
    try:
        params = list(inspect.signature(called).parameters.values())
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _line(defined: Any) -> int:
    try:
        return inspect.getsourcelines(defined)[1]
    except (OSError, TypeError):
        return 1


def _default(module: types.ModuleType) -> type:
    path = str(module.__file__)
    classes = sorted(
        (
            c
            for c in vars(module).values()
            if isinstance(c, type) and issubclass(c, torch.nn.Module) and c.__module__ == module.__name__
        ),
        key=_line,
    )
    chosen = [c for c in classes if not _needs(c)][-1:]
    if not chosen:
        which = f"every nn.Module class needs arguments ({classes[-1].__name__})" if classes else "no nn.Module class"
        raise NpudslError(f"{position(path, _line(classes[-1]) if classes else 1)}: {which}; {_MAKE}")
    return chosen[0]


def pick_model(module: types.ModuleType, spec: str | None = None) -> torch.nn.Module:
    """The model ``spec`` names (default: the file's last ``nn.Module`` class built without arguments), built."""
    found, where, name = (
        (_default(module), str(module.__file__), "") if spec is None else _named(module, spec, "--model")
    )
    name = name or found.__name__
    if not callable(found):
        raise NpudslError(f"{position(where, 1)}: no class or function {name} for --model {spec}; {_MAKE}")
    if _needs(found):
        with contextlib.suppress(TypeError):
            where = inspect.getsourcefile(found) or where
        kind = "class" if isinstance(found, type) else "function"
        raise NpudslError(
            f"{position(where, _line(found))}: {kind} {name} needs arguments ({', '.join(_needs(found))}); {_MAKE}"
        )
    model = run_user(where, f"building the model ({name}())", "the model must build on the CPU", found)
    if not isinstance(model, torch.nn.Module):
        raise NpudslError(
            f"{position(where, _line(found))}: {name}() returned a {type(model).__name__}, not an nn.Module"
        )
    return model
