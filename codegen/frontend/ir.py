"""The IR collected from decorators: what each decorated function asks for, and where."""

from __future__ import annotations

import attrs
from attrs import validators as v

from npudsl.schedule import DECORATOR_FIELDS

__all__ = [
    "CallSite",
    "CoreLimit",
    "Events",
    "Guard",
    "KeepOutput",
    "Loc",
    "ModuleIR",
    "Stream",
    "StreamFunction",
]


_DOTTED = r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*"


@attrs.frozen(kw_only=True)
class Loc:
    """A 1-based source position."""

    line: int = attrs.field(validator=v.ge(1))
    col: int = attrs.field(validator=v.ge(1))


@attrs.frozen(kw_only=True)
class Guard:
    """``when="a.b"``: the dotted name read at call time."""

    dotted: str = attrs.field(validator=v.matches_re(_DOTTED))

    @property
    def root(self) -> str:
        return self.dotted.split(".", 1)[0]


@attrs.frozen(kw_only=True)
class Stream:
    tag: str
    priority: int = attrs.field(validator=v.ge(0))
    sync: str = attrs.field(validator=v.in_(("auto", "manual")))
    when: Guard | None
    loc: Loc

    @property
    def is_default(self) -> bool:
        return self.tag == "default"


@attrs.frozen(kw_only=True)
class Events:
    """One ``@after`` or ``@records``."""

    names: tuple[str, ...] = attrs.field(validator=v.min_len(1))
    when: Guard | None
    loc: Loc


def _count(_instance: object, attribute: attrs.Attribute, value: object) -> None:
    """A core count is a positive ``int`` or a dotted name (a ``str``) read at call time."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{attribute.name} must be an int or a dotted name, not {value!r}")
    if isinstance(value, int):
        v.ge(1)(_instance, attribute, value)
    else:
        v.matches_re(_DOTTED)(_instance, attribute, value)


@attrs.frozen(kw_only=True)
class CoreLimit:
    """``@core_limit(aicore, vector)``: each count an ``int``, or a dotted name (``"self.cfg.aic"``) that the
    generated code spells as that expression, read when the function is called."""

    aicore: int | str = attrs.field(validator=_count)
    vector: int | str = attrs.field(validator=_count)
    when: Guard | None
    loc: Loc

    @property
    def known(self) -> bool:
        """Both counts are integers (``npudsl check`` can verify them)."""
        return isinstance(self.aicore, int) and isinstance(self.vector, int)


@attrs.frozen(kw_only=True)
class KeepOutput:
    clone: bool
    when: Guard | None
    loc: Loc


@attrs.frozen(kw_only=True)
class StreamFunction:
    """A decorated function, method, or class (then its ``forward``)."""

    owner: str | None  # the class, or None for a module-level function
    name: str  # the function's name ("forward" for a decorated class)
    loc: Loc  # the first decorator
    class_level: bool = False
    stream: Stream | None = None
    waits: tuple[Events, ...] = ()
    records: tuple[Events, ...] = ()
    core_limit: CoreLimit | None = None
    keep_output: KeepOutput | None = None
    inputs: tuple[str, ...] = ()  # parameters that may carry tensors (see ``codegen.frontend.signature``)
    required_inputs: tuple[str, ...] = ()  # those of them without a default: tensors at every call
    returns_value: bool = True  # some ``return`` gives a value
    params: tuple[str, ...] = ()  # every parameter name, in order (what the run index records)

    @property
    def qualname(self) -> str:
        return f"{self.owner}.{self.name}" if self.owner else self.name

    @property
    def decorations(self) -> tuple[Stream | Events | CoreLimit | KeepOutput, ...]:
        """What each of the function's decorators says, in the registry's order (``DECORATOR_FIELDS``)."""
        found: list[Stream | Events | CoreLimit | KeepOutput] = []
        for field in DECORATOR_FIELDS.values():
            value = getattr(self, field)
            found.extend(value if isinstance(value, tuple) else () if value is None else (value,))
        return tuple(found)

    @property
    def auto_sync(self) -> bool:
        return self.stream is not None and self.stream.sync == "auto" and not self.stream.is_default


@attrs.frozen(kw_only=True)
class CallSite:
    """A visible call of an auto-synchronized stream function."""

    caller: str  # qualname of the calling function
    callee: str  # key of the callee in the run index
    receiver: str  # "self" or "self.<submodule>"
    bindable: bool  # the result is bound by a plain statement, so the join can wait
    loc: Loc


@attrs.frozen(kw_only=True)
class ModuleIR:
    path: str
    module_name: str
    functions: tuple[StreamFunction, ...]
