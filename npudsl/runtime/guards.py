"""Reading a decorator's dotted names at call time, without ``eval``: ``when`` guards and ``core_limit`` counts.

The first component of the dotted name is a parameter of the decorated function
(bound from the call's arguments, then its defaults), else a global of the
function's module, else a builtin; the rest are attribute lookups. Written with
plain lookups so dynamo folds the value to a constant while tracing.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from npudsl.errors import NpudslError

__all__ = ["guard_holds", "read_dotted"]


def _parameter(fn: Callable[..., Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, Any]:
    code = fn.__code__
    if name in kwargs:
        return True, kwargs[name]
    positional = code.co_varnames[: code.co_argcount]
    keyword_defaults = fn.__kwdefaults__ or {}
    if name in keyword_defaults:
        return True, keyword_defaults[name]
    if name not in positional:
        return False, None
    index = positional.index(name)
    if index < len(args):
        return True, args[index]
    defaults = fn.__defaults__ or ()
    offset = index - (len(positional) - len(defaults))
    return (True, defaults[offset]) if offset >= 0 else (False, None)


def _root(fn: Callable[..., Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    found, value = _parameter(fn, name, args, kwargs)
    if found:
        return value
    if name in fn.__globals__:
        return fn.__globals__[name]
    if hasattr(builtins, name):
        return getattr(builtins, name)
    raise NpudslError(f"{name!r} is neither a parameter of {fn.__qualname__} nor a global of its module")


def read_dotted(dotted: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The value ``dotted`` names now, in the scope of ``fn`` called with ``args`` and ``kwargs``."""
    first, *rest = dotted.split(".")
    try:
        value = _root(fn, first, args, kwargs)
    except NpudslError as error:
        raise NpudslError(f"{dotted!r}: {error}") from None
    for attribute in rest:
        value = getattr(value, attribute)
    return value


def guard_holds(when: str | None, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """True when there is no guard or the named value is truthy now."""
    if when is None:
        return True
    return bool(read_dotted(when, fn, args, kwargs))
