"""npudsl: say once which stream, event and core limit each piece of a model uses."""

from __future__ import annotations

from typing import Any

from npudsl._version import __version__
from npudsl.decorators import after, core_limit, keep_output, on_stream, records
from npudsl.errors import DecoratorError, NpudslError, StaleOutputError, StreamRaceError

__all__ = [
    "DecoratorError",
    "NpudslError",
    "StaleOutputError",
    "StreamRaceError",
    "__version__",
    "after",
    "compile",
    "core_limit",
    "keep_output",
    "on_stream",
    "records",
]


def compile(model: Any, target: str = "portable", **kwargs: Any) -> Any:  # noqa: A001
    """Transform the model's decorated classes in-process and ``torch.compile`` it."""
    from npudsl.compiler import compile_model

    return compile_model(model, target=target, **kwargs)
