"""npudsl's own traceable runtime: ``runtime.stream`` / ``record`` / ``wait`` / ``record_stream`` /
``core_limit``, runnable on CPU, CUDA or NPU. Events are their tags; nothing is created at import."""

from __future__ import annotations

import attrs

from codegen.plan import Clone, Context, EventRef, KeepAlive, LimitCores, Record, Step, SwitchStream, Wait
from codegen.targets.base import clone_statement, quote

__all__ = ["Portable"]


@attrs.frozen
class Portable:
    name: str = "portable"

    def context(self, context: Context) -> str | None:
        if isinstance(context, SwitchStream):  # "default" too: a side-stream caller may call main-stream code
            return f"runtime.stream({quote(context.tag)}, {context.priority})"
        if isinstance(context, LimitCores):
            return f"runtime.core_limit({context.aicore}, {context.vector})"
        raise TypeError(context)

    def statements(self, step: Step, values: tuple[str, ...]) -> list[str]:
        if isinstance(step, Record):
            return [f"runtime.record({quote(step.event.tag)})"]
        if isinstance(step, Wait):
            return [f"runtime.wait({quote(step.event.tag)})"]
        if isinstance(step, KeepAlive):
            return [f"runtime.record_stream({v}, {quote(step.stream)})" for v in values]
        if isinstance(step, Clone):
            return clone_statement(step, values)
        raise TypeError(step)

    def define_event(self, event: EventRef) -> str | None:
        return None  # the runtime keys events by their process-global tag

    def imports(self, *, events: bool) -> list[str]:
        return ["from npudsl import runtime"]

    def module_comment(self) -> str | None:
        return None
