"""Load an example file, pick its model, transform it for ``portable`` and capture its FX graph."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import re
import socket
import sys
import types
from collections.abc import Iterator
from typing import Any

import torch
import torch._dynamo
import torch.fx

from npudsl.errors import NpudslError

__all__ = ["capture_graph", "load_example", "pick_model", "resolve_inputs", "single_process_group"]


def load_example(path: str) -> types.ModuleType:
    """Import ``path`` as a module of its own name (registered, so it can be transformed in-process)."""
    name = os.path.splitext(os.path.basename(path))[0]
    existing = sys.modules.get(name)
    if existing is not None and os.path.abspath(getattr(existing, "__file__", "") or "") != os.path.abspath(path):
        name = f"npudsl_timeline_{name}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise NpudslError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _function_in(module: types.ModuleType, name: str, where: str) -> Any:
    found = getattr(module, name, None)
    if not callable(found):
        raise NpudslError(f"{where}: defines no function {name}(); the picture needs inputs to capture a graph "
                          "(pass --inputs FUNC, FILE.py:FUNC or package.module:FUNC)")
    return found


def resolve_inputs(module: types.ModuleType, path: str, spec: str | None) -> Any:
    """The function that makes the inputs: ``NAME`` in ``module``, ``FILE.py:NAME`` or ``package.module:NAME``."""
    if spec is None or ":" not in spec:
        return _function_in(module, spec or "example_inputs", path)
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise NpudslError(f"--inputs {spec}: no such file {where}")
        return _function_in(load_example(where), name, where)
    try:
        other = importlib.import_module(where)
    except ImportError as exc:
        raise NpudslError(f"--inputs {spec}: cannot import {where}: {exc}") from None
    return _function_in(other, name, where)


def _no_arguments(cls: type) -> bool:
    params = list(inspect.signature(cls).parameters.values())
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def pick_model(module: types.ModuleType, name: str | None = None) -> torch.nn.Module:
    """``name``'s instance, or by default the last ``nn.Module`` class of the file built without arguments."""
    classes = [c for c in vars(module).values()
               if isinstance(c, type) and issubclass(c, torch.nn.Module) and c.__module__ == module.__name__]
    if name is not None:
        chosen = [c for c in classes if c.__name__ == name]
    else:
        ordered = sorted(classes, key=lambda c: inspect.getsourcelines(c)[1])
        chosen = [c for c in ordered if _no_arguments(c)][-1:]
    if not chosen:
        wanted = f"class {name}" if name else "an nn.Module class whose constructor needs no arguments"
        raise NpudslError(f"{module.__file__}: no {wanted}; pass --model NAME")
    return chosen[0]()


def capture_graph(model: torch.nn.Module, inputs: tuple[Any, ...], *, path: str = "<model>"
                  ) -> tuple[torch.fx.GraphModule, list[Any]]:
    """The FX graph ``torch.compile(fullgraph=True)`` captures for ``model(*inputs)``, and the graph's inputs.

    A model dynamo cannot capture whole (a ``print`` in ``forward``, say) raises
    :class:`~npudsl.errors.NpudslError` naming the line where it stopped (``path`` when none is known).
    """
    from npudsl.runtime.loader import swap_classes

    swap_classes(model, "portable")
    graphs: list[tuple[torch.fx.GraphModule, list[Any]]] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        graphs.append((gm, list(example_inputs)))
        return gm.forward

    torch._dynamo.reset()
    try:
        with torch.no_grad():
            torch.compile(model, backend=backend, fullgraph=True)(*inputs)
    except torch._dynamo.exc.Unsupported as exc:
        raise NpudslError(_uncaptured(path, type(model).__name__, str(exc))) from None
    return graphs[0]


def _uncaptured(path: str, model: str, message: str) -> str:
    """Where and why dynamo stopped: ``path:line: ... (reason: the line's code)``."""
    where = re.findall(r'File "([^"]+)", line (\d+), in \w+\n\s*(.*)', message)
    at, code = (f"{where[-1][0]}:{where[-1][1]}", f": {where[-1][2].strip()}") if where else (path, "")
    return (f"{at}: torch.compile cannot capture {model} as one graph ({message.splitlines()[0]}{code}); "
            "npudsl pictures and plans the whole graph")


@contextlib.contextmanager
def single_process_group(module: types.ModuleType) -> Iterator[None]:
    """A one-rank gloo group while ``module``'s model is captured, when it uses ``torch.distributed``
    and no group exists: its collectives then trace like any op (the picture needs no other rank)."""
    import torch.distributed as dist

    uses = any(value is dist for value in vars(module).values())
    if not uses or not dist.is_available() or dist.is_initialized():
        yield
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()
