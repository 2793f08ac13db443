"""npudsl's errors raised from inside ``torch.compile``, reaching the user as one clear exception.

Dynamo wraps what a backend raises in ``BackendCompilerFailed``, appends hints to the
message, and keeps its own frames in the traceback. An error made here is also a
``ShortenTraceback``: dynamo re-raises it as it is, its traceback starts at the frame
that raised it, and its text is npudsl's message alone. It still is the public type
(``except npudsl.StreamRaceError`` catches it) and prints as that type.
"""

from __future__ import annotations

import types
from typing import Any, TypeVar, cast

from torch._dynamo.exc import ShortenTraceback

from npudsl.errors import NpudslError

__all__ = ["compile_time_error"]

_E = TypeVar("_E", bound=NpudslError)
_MADE: dict[type[NpudslError], type[NpudslError]] = {}  # one subclass per public type


def _subclass(error: type[NpudslError]) -> type[NpudslError]:
    if error in _MADE:
        return _MADE[error]

    def __init__(self: Any, message: str, frame: types.FrameType) -> None:
        ShortenTraceback.__init__(self, message, first_useful_frame=frame)
        self.message = message

    def __str__(self: Any) -> str:  # dynamo appends its hints to args[0]; show ours only
        return self.message

    namespace = {"__init__": __init__, "__str__": __str__, "__module__": "npudsl", "__qualname__": error.__qualname__}
    made = _MADE[error] = type(error.__name__, (error, ShortenTraceback), namespace)
    return made


def compile_time_error(error: type[_E], message: str, frame: types.FrameType) -> _E:
    """An ``error`` to raise in ``frame`` (the raising function's own frame) while torch.compile runs."""
    return cast(_E, _subclass(error)(message, frame))
