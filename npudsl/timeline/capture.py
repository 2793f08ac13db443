"""Load an example file, pick its model, transform it for ``portable`` and capture its FX graph."""

from __future__ import annotations

import contextlib
import importlib.util
import linecache
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
from npudsl.timeline.pick import pick_model, resolve_inputs
from npudsl.timeline.user_code import run_user

__all__ = ["capture_graph", "load_example", "pick_model", "resolve_inputs", "single_process_group"]


def load_example(path: str, *, source: str | None = None) -> types.ModuleType:
    """Import ``path`` as a module of its own name (registered, so it can be transformed in-process); a file
    of an importable package (an installed ``modeling_*.py``) under its dotted name, so its relative imports
    work. With ``source``, that text stands for the file's (tracebacks and dynamo's stack traces name ``path``)."""
    name = _package_name(path) or os.path.splitext(os.path.basename(path))[0]
    existing = sys.modules.get(name)
    if existing is not None and os.path.abspath(getattr(existing, "__file__", "") or "") != os.path.abspath(path):
        name = f"npudsl_timeline_{name}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise NpudslError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    linecache.cache.pop(path, None)
    if source is not None:
        linecache.cache[path] = (len(source), None, source.splitlines(keepends=True), path)
    hint = "the file must import on its own (python FILE.py)"
    try:
        run_user(path, f"importing {path}", hint, lambda: _execute(spec, module, path, source))
    except NpudslError:
        sys.modules.pop(name, None)
        raise
    return module


def _package_name(path: str) -> str | None:
    """``package.module`` when ``path`` is that module of an importable package (its folders hold
    ``__init__.py`` up to a folder on ``sys.path``), else None."""
    folder, parts = os.path.dirname(os.path.abspath(path)), [os.path.splitext(os.path.basename(path))[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    roots = {os.path.abspath(p or os.curdir) for p in sys.path}
    return ".".join(parts) if len(parts) > 1 and folder in roots else None


def _execute(spec: Any, module: types.ModuleType, path: str, source: str | None) -> None:
    if source is None:
        spec.loader.exec_module(module)
    else:
        exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - the user's own model file


def capture_graph(
    model: torch.nn.Module, inputs: tuple[Any, ...], *, path: str = "<model>"
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
    from npudsl.graph_breaks import WHOLE

    return (
        f"{at}: torch.compile cannot capture {model} as one graph ({message.splitlines()[0]}{code}); "
        f"npudsl pictures and plans the whole graph: {WHOLE}"
    )


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
