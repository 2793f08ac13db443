"""The stream function a call through an object's attribute reaches: a submodule, a layer list's element.

A call resolver (:mod:`~codegen.lower.flow.callees`) meets ``self.sub(x)``, ``m.sub(x)`` for a name annotated with a
class of the run, and ``layer(x)`` for the target of a loop over a layer list; each asks which class the object's
``__init__`` makes there and which of its methods is a stream function of the run. The class is read where it is
written: in the caller's own module (``name_keys.class_key``), in the module of the annotated class (``class_in``),
or in the module of a base class that assigns it (``inherited_callees.py``). Kept apart from the resolver's walk
over the forms of a call, so each reads alone.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import Protocol

from codegen.lower.flow.name_keys import Names, annotated_class, class_key

__all__ = ["Holders", "annotated_submodule_key", "element_key", "owner_submodule_key", "submodule_key"]


class Holders(Names, Protocol):
    """What of the run the answers read besides the module's names (a call resolver has each)."""

    owner: str | None
    submodules: dict[str, dict[str, str]]
    class_in: Callable[[str, str], str | None] | None
    inherited: Callable[[str, str, str], str | None] | None

    @property
    def loop_lists(self) -> dict[str, str]: ...


def submodule_key(found: Holders, attr: str, method: str = "forward") -> str | None:
    """The key of ``method`` (a stream function) of the class that ``self.<attr>`` holds, if any."""
    written = found.submodules.get(f"{found.module}:{found.owner}", {}).get(attr)
    key = class_key(found, _written(written), method) if written is not None else None
    if key is None and found.owner:  # assigned by a base class in another module, or made by a factory, if any
        return _inherited(found, f"{found.module}:{found.owner}", attr, method)
    return key


def element_key(found: Holders, name: str, method: str = "forward") -> str | None:
    """The key of ``method`` of the class every element of the list the loop target ``name`` walks holds."""
    written = found.loop_lists[name]
    key = class_key(found, _written(written), method)
    made = found.class_in(found.module, written) if key is None and found.class_in is not None else None
    return key if made is None or f"{made}.{method}" not in found.callees else f"{made}.{method}"  # a factory's


def annotated_submodule_key(found: Holders, name: str, attr: str, method: str = "forward") -> str | None:
    """The key of ``method`` of the class that ``<name>.<attr>`` holds, ``name`` annotated with a class whose
    ``__init__`` assigns ``self.<attr>``: that class read in the module that assigns it."""
    owner = annotated_class(found, name)
    return owner_submodule_key(found, owner, attr, method) if owner is not None else None


def owner_submodule_key(found: Holders, owner: str, attr: str, method: str = "forward") -> str | None:
    """The key of ``method`` of the class that ``self.<attr>`` holds in an object of ``owner`` (``module:Class``),
    read in the module that assigns it."""
    written = found.submodules.get(owner, {}).get(attr)
    if written is None:  # assigned by a base class of ``owner`` in another module, if any
        return _inherited(found, owner, attr, method)
    module = owner.rpartition(":")[0]
    if module == found.module:  # written in the caller's own module: read as ``self.sub`` is
        return class_key(found, _written(written), method)
    cls = found.class_in(module, written) if found.class_in is not None else None
    key = f"{cls}.{method}" if cls else None
    return key if key in found.callees else _inherited(found, owner, attr, method)  # a factory's, if any


@functools.lru_cache(maxsize=4096)
def _written(text: str) -> ast.expr:
    """The expression an ``__init__`` assigned, from its text (the index keeps text); parsed once per text, read
    only (``class_key`` reads its dotted name)."""
    return ast.parse(text, mode="eval").body


def _inherited(found: Holders, owner: str, attr: str, method: str) -> str | None:
    return found.inherited(owner, attr, method) if found.inherited is not None else None
