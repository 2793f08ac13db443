"""A subclass per user class that carries the transformed methods: the user's instances keep their class's
identity (``isinstance`` holds, ``torch.save`` pickles the user's class), only their behaviour changes.

Each method keeps ``super()`` meaning what it meant in the user's class: its ``__class__`` cell is the user's
class. A method the class inherits from another transformed class comes from that class's transformed twin.
"""

from __future__ import annotations

import copyreg
import types
from typing import Any

__all__ = ["shadow_class"]

_SKIPPED = frozenset({"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"})


def _with_class_cell(value: Any, owner: type) -> Any:
    """``value`` (a function, or a staticmethod/classmethod/property of one) with ``__class__`` bound to ``owner``."""
    if isinstance(value, (staticmethod, classmethod)):
        return type(value)(_with_class_cell(value.__func__, owner))
    if isinstance(value, property):
        fget, fset, fdel = (_with_class_cell(f, owner) if f else None for f in (value.fget, value.fset, value.fdel))
        return property(fget, fset, fdel, value.__doc__)
    if not isinstance(value, types.FunctionType) or "__class__" not in value.__code__.co_freevars:
        return value
    cells = tuple(
        types.CellType(owner) if name == "__class__" else cell
        for name, cell in zip(value.__code__.co_freevars, value.__closure__ or ())
    )
    rebuilt = types.FunctionType(value.__code__, value.__globals__, value.__name__, value.__defaults__, cells)
    rebuilt.__kwdefaults__, rebuilt.__dict__ = value.__kwdefaults__, dict(value.__dict__)
    rebuilt.__qualname__, rebuilt.__doc__ = value.__qualname__, value.__doc__
    rebuilt.__annotations__ = dict(value.__annotations__)
    return rebuilt


def _members(original: type, twins: dict[type, type]) -> dict[str, Any]:
    """The transformed members ``original`` resolves to, each bound to the class that defines it."""
    members: dict[str, Any] = {}
    claimed: set[str] = set()
    for ancestor in original.__mro__:
        twin = twins.get(ancestor)
        names = set(vars(ancestor)) - _SKIPPED
        if twin is not None:
            for name, value in vars(twin).items():
                if name not in _SKIPPED and name not in claimed and name in names:
                    members[name] = _with_class_cell(value, ancestor)
        claimed |= names
    return members


def shadow_class(original: type, twins: dict[type, type]) -> type:
    """``original``'s subclass with the transformed methods of ``twins`` (user class -> transformed class)."""
    members = _members(original, twins)
    shadow: Any  # the class made below

    def __reduce_ex__(self: Any, protocol: int) -> Any:  # noqa: N807 - pickles as the user's class
        reduced = super(shadow, self).__reduce_ex__(protocol)
        if not isinstance(reduced, tuple) or shadow not in reduced[1]:
            return reduced
        return (copyreg.__dict__["_reconstructor"], (original, object, None), *reduced[2:])

    members.update(
        __reduce_ex__=__reduce_ex__,
        __module__=original.__module__,
        __qualname__=original.__qualname__,
        __npudsl_original__=original,
    )
    shadow = type(original)(original.__name__, (original,), members)
    return shadow
