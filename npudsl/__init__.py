"""npudsl: say once which stream, event and core limit each piece of a model uses."""

from __future__ import annotations

from typing import Any

from npudsl import decorators
from npudsl._version import __version__
from npudsl.decorators import *  # noqa: F403  (every public decorator, as npudsl.decorators lists them)
from npudsl.errors import DecoratorError, NpudslError, StaleOutputError, StreamRaceError

__all__ = [
    "DecoratorError",
    "NpudslError",
    "StaleOutputError",
    "StreamRaceError",
    "__version__",
    "compile",
]
__all__ += decorators.__all__
__all__.sort()  # the order `from npudsl import *` binds, the same however many decorators there are


def compile(model: Any, target: str = "portable", **kwargs: Any) -> Any:  # noqa: A001
    """Transform the model's decorated classes in-process and ``torch.compile`` it."""
    from npudsl.compiler import compile_model

    return compile_model(model, target=target, **kwargs)
