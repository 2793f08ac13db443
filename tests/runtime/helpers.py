"""Helpers of the runtime tests: marker lines in model files, and capturing one graph."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

__all__ = ["capture_graph", "marked_line"]


def marked_line(module_file: str, marker: str) -> str:
    """The ``file:line`` of the line ending in the comment ``# <marker>``."""
    path = os.path.abspath(module_file)
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.rstrip().endswith(f"# {marker}"):
                return f"{path}:{number}"
    raise AssertionError(f"no marker {marker!r} in {path}")


def capture_graph(
    model: torch.nn.Module, x: torch.Tensor, then: Callable[..., Any] | None = None
) -> torch.fx.GraphModule:
    """Compile ``model`` (fullgraph), call it on ``x``, return its one graph; ``then`` runs it, else ``gm.forward``."""
    graphs: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        graphs.append(gm)
        return then(gm, example_inputs) if then else gm.forward

    torch.compile(model, backend=backend, fullgraph=True)(x)
    assert len(graphs) == 1
    return graphs[0]
