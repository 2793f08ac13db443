"""What a target is: how it spells each step of a plan."""

from __future__ import annotations

from typing import Protocol

from codegen.plan import Clone, Context, EventRef, KeepAlive, Step

__all__ = ["Target", "clone_statement", "is_value_step", "quote"]


class Target(Protocol):
    """A target turns plan steps into source text; guards and placement are the rewriter's."""

    name: str

    def context(self, context: Context) -> str | None:
        """The ``with`` item for ``context``, or None when the target needs none."""

    def statements(self, step: Step, values: tuple[str, ...]) -> list[str]:
        """Statements for ``step``; ``values`` are the returned names (for value steps)."""

    def define_event(self, event: EventRef) -> str | None:
        """The module-level statement that creates ``event``, or None."""

    def imports(self, *, events: bool) -> list[str]:
        """Import statements the generated code needs."""

    def module_comment(self) -> str | None:
        """A comment line above the event definitions, or None."""


def clone_statement(step: Clone, values: tuple[str, ...]) -> list[str]:
    """``a, b = a.clone(), b.clone()``: the same for every target."""
    if not values:
        return []
    return [f"{', '.join(values)} = {', '.join(f'{v}.clone()' for v in values)}"]


def is_value_step(step: Step) -> bool:
    return isinstance(step, (Clone, KeepAlive))


def quote(text: str) -> str:
    """A double-quoted literal; tags and stream names are validated to need no escapes."""
    return f'"{text}"'
