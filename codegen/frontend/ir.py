"""The IR collected from decorators: what each decorated function asks for, and where.

What the decorators say is :mod:`npudsl.schedule`'s model, the one the decorators
build at run time; here each spec carries the position of its decorator
(``Loc``), and a :class:`StreamFunction` is a ``Schedule[Loc]`` with the facts of
the function it decorates.
"""

from __future__ import annotations

import attrs

from npudsl.schedule import CoreLimitSpec, EventSpec, Guard, KeepOutputSpec, Loc, Schedule, StreamSpec

__all__ = [
    "CoreLimit",
    "Events",
    "Guard",
    "KeepOutput",
    "Loc",
    "ModuleIR",
    "Stream",
    "StreamFunction",
]

Stream = StreamSpec[Loc]
Events = EventSpec[Loc]  # one ``@after`` or ``@records``
CoreLimit = CoreLimitSpec[Loc]
KeepOutput = KeepOutputSpec[Loc]


@attrs.frozen(kw_only=True)
class StreamFunction(Schedule[Loc]):
    """A decorated function, method, or class (then its ``forward``): what its decorators say, and where."""

    owner: str | None  # the class, or None for a module-level function
    name: str  # the function's name ("forward" for a decorated class)
    loc: Loc  # the first decorator
    class_level: bool = False
    inputs: tuple[str, ...] = ()  # parameters that may carry tensors (see ``codegen.frontend.signature``)
    required_inputs: tuple[str, ...] = ()  # those of them without a default: tensors at every call
    returns_value: bool = True  # some ``return`` gives a value
    params: tuple[str, ...] = ()  # every parameter name, in order (what the run index records)

    @property
    def qualname(self) -> str:
        return f"{self.owner}.{self.name}" if self.owner else self.name


@attrs.frozen(kw_only=True)
class ModuleIR:
    path: str
    module_name: str
    functions: tuple[StreamFunction, ...]
