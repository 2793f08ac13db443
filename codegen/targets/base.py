"""What a target is: how it spells each step of a plan."""

from __future__ import annotations

from typing import Protocol

from codegen.plan import Clone, Context, EventRef, FunctionPlan, KeepAlive, ModulePlan, Step

__all__ = [
    "Target",
    "clone_statement",
    "entry_lines",
    "for_function",
    "is_value_step",
    "module_definitions",
    "module_imports",
    "quote",
    "wants_values",
]


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


# Optional hooks. A target may define any of these methods; the rewriter calls them through the
# functions below, which fall back to what a target without the hook needs (aclgraph defines none):
#   for_function(plan) -> Target       the target as it spells one function (it may read the plan's fn)
#   entry_lines(plan) -> list[str]     statements at the very start of the rewritten body
#   module_imports(plan) -> list[str]  replaces ``imports(events=...)``: what this module needs
#   module_definitions(plan) -> str    module-level helper source placed after the imports
#   wants_values(step) -> bool         the step reads the returned values (like Clone and KeepAlive)


def for_function(target: Target, plan: FunctionPlan) -> Target:
    hook = getattr(target, "for_function", None)
    return hook(plan) if hook else target


def entry_lines(target: Target, plan: FunctionPlan) -> list[str]:
    hook = getattr(target, "entry_lines", None)
    return hook(plan) if hook else []


def module_imports(target: Target, plan: ModulePlan) -> list[str] | None:
    """The target's own import list for ``plan``, or None to use ``imports(events=...)``."""
    hook = getattr(target, "module_imports", None)
    return hook(plan) if hook else None


def module_definitions(target: Target, plan: ModulePlan) -> str:
    hook = getattr(target, "module_definitions", None)
    return hook(plan) if hook else ""


def wants_values(target: Target, step: Step) -> bool:
    hook = getattr(target, "wants_values", None)
    return is_value_step(step) or bool(hook and hook(step))


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
