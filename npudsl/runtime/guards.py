"""Reading a decorator's dotted names at call time, without ``eval``: ``when`` guards and ``core_limit`` counts.

The first component of the dotted name is a parameter of the decorated function
(bound from the call's arguments, then its defaults), else a global of the
function's module, else a builtin; the rest are attribute lookups. Written with
plain lookups so dynamo folds the value to a constant while tracing.

What goes wrong here is the user's to fix, so it is said as one positioned line at the
decorated function (``path:line:col``, its first decorator): an attribute that is not there
(a typo, ``self.multistrem``), and a tensor where a guard wants a Python bool (a tensor's
truth is data-dependent: eager would sync the device to read it, dynamo cannot trace it).
"""

from __future__ import annotations

import builtins
import difflib
import linecache
import sys
from collections.abc import Callable
from typing import Any

from npudsl import codes
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
        raise NpudslError(
            f"{where(fn)}: {codes.GUARD_ROOT} {dotted!r}: {error} (hint: root it at self, a "
            "parameter or a "
            "global of the module, as npudsl check says)"
        ) from None
    for position, attribute in enumerate(rest, 1):
        if not hasattr(value, attribute):
            raise NpudslError(_missing(dotted, position, value, fn))
        value = getattr(value, attribute)
    return value


def where(fn: Callable[..., Any]) -> str:
    """``path:line:col`` of ``fn``'s first decorator (its ``def`` when undecorated), the path as checks print it."""
    from npudsl.cli.report import portable_path

    code = fn.__code__
    text = linecache.getline(code.co_filename, code.co_firstlineno)
    indent = len(text) - len(text.lstrip())
    col = indent + (2 if text.lstrip().startswith("@") else 1)
    return f"{portable_path(code.co_filename)}:{code.co_firstlineno}:{col}"


def _missing(dotted: str, position: int, value: Any, fn: Callable[..., Any]) -> str:
    """The error for the ``position``-th part of ``dotted``, which ``value`` does not have."""
    parts = dotted.split(".")
    attribute = parts[position]
    close = difflib.get_close_matches(attribute, [n for n in dir(value) if not n.startswith("__")], n=1)
    fixed = ".".join([*parts[:position], close[0] if close else attribute, *parts[position + 1 :]])
    hint = f'did you mean "{fixed}"?' if close else f"define {attribute} on {type(value).__name__} before the call"
    return (
        f"{where(fn)}: {codes.UNKNOWN_ATTRIBUTE} {dotted!r} on {fn.__qualname__}: {type(value).__name__} "
        "has no attribute "
        f"{attribute!r} (hint: {hint})"
    )


def _is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def guard_holds(when: str | None, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """True when there is no guard or the named value is truthy now."""
    if when is None:
        return True
    value = read_dotted(when, fn, args, kwargs)
    if _is_tensor(value):
        raise NpudslError(
            f"{where(fn)}: {codes.TENSOR_GUARD} when={when!r} on {fn.__qualname__} is a tensor; "
            "a guard must be "
            "a Python bool, fixed for the call (hint: pass True/False, e.g. enabled=True, not "
            "torch.tensor(True); a flag computed on the device needs .item() before the call, "
            "which torch.compile cannot trace)"
        )
    return bool(value)
