"""What one entry of the decorator registry says, and the two things both halves do with it.

The decorators (at decoration time) and the transformer (reading the source)
check a decorator's arguments with :meth:`Decorator.violation` and add what it
says to a function's model with :meth:`Decorator.add`, so the same call means
the same thing, and fails with the same message, on both sides. The entries
themselves live beside the model they fill (:data:`npudsl.schedule.DECORATORS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

from npudsl import _rules

__all__ = ["Decorator", "Twice"]

S = TypeVar("S")  # a ``Schedule``, of either half


class Twice(Exception):
    """A decorator that does not repeat, given twice to one function."""


@attrs.frozen(kw_only=True)
class Decorator:
    """One decorator: its name, the ``Schedule`` field it fills, the spec it makes from its arguments (by name,
    plus ``loc``), the rule of each argument but ``when`` (every decorator takes ``when``), and whether it may
    be written bare (``@keep_output``)."""

    name: str
    field: str
    spec: Callable[..., Any]
    rules: Mapping[str, Callable[[object], _rules.Violation | None]]
    bare: bool = False

    def rule(self, argument: str) -> Callable[[object], _rules.Violation | None]:
        return _rules.check_when if argument == "when" else self.rules[argument]

    def violation(self, arguments: Mapping[str, object]) -> tuple[str, _rules.Violation] | None:
        """The first argument (in the order given) that breaks its rule, and how."""
        for argument, value in arguments.items():
            found = self.rule(argument)(value)
            if found is not None:
                return argument, found
        return None

    def make(self, arguments: Mapping[str, object], loc: object) -> Any:
        """The spec for arguments that keep their rules; ``loc`` says where it is written (``None`` at run time)."""
        return self.spec(**arguments, loc=loc)

    def add(self, schedule: S, spec: object, *, outer: bool) -> S:
        """``schedule`` with ``spec`` added: a repeating decorator's specs keep source order (``outer``: written
        above those there already); any other raises :class:`Twice` when its field is set."""
        current = getattr(schedule, self.field)
        if isinstance(current, tuple):
            return attrs.evolve(schedule, **{self.field: (spec, *current) if outer else (*current, spec)})  # type: ignore[misc]
        if current is not None:
            raise Twice(self.name)
        return attrs.evolve(schedule, **{self.field: spec})  # type: ignore[misc]
