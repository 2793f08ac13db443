"""npudsl's own traceable runtime: ``runtime.stream`` / ``record`` / ``wait`` / ``record_stream`` /
``core_limit`` / ``clone``, runnable on CPU, CUDA or NPU. Events are their tags; nothing is created at import."""

from __future__ import annotations

import attrs

from codegen.lower.plan import Context, CurrentStream, EventRef, LimitCores, Record, Step, Value, Wait
from codegen.targets.base import Spelling, is_tensor, picked, quote

__all__ = ["PortableSpelling"]


@attrs.define(eq=False)
class PortableSpelling(Spelling):
    events_are_variables: bool = False

    @property
    def runtime(self) -> str:
        return self.use("npudsl", "runtime")

    def context(self, context: Context) -> str | None:
        if isinstance(context, LimitCores):
            return f"{self.runtime}.core_limit({context.aicore}, {context.vector})"
        return f"{self.runtime}.stream({quote(context.tag)}, {context.priority})"  # "default" too: a side-stream
        # caller may call main-stream code

    def step(self, step: Step) -> list[str]:
        if isinstance(step, Record):
            return [f"{self.runtime}.record({picked(step.event, _tag)})"]
        if isinstance(step, Wait):
            return [f"{self.runtime}.wait({picked(step.event, _tag)})"]
        return []  # GE's control edges: portable orders through events

    def keep_alive(self, value: Value, stream: str | CurrentStream) -> list[str]:
        if isinstance(stream, CurrentStream):
            where = f"{self.runtime}.current_stream()"
        else:
            where = quote(stream)
        return [f"{self.runtime}.record_stream({value.name}, {where})"]

    def clone(self, value: Value) -> str:
        return f"{value.name}.clone()" if is_tensor(value) else f"{self.runtime}.clone({value.name})"


def _tag(event: EventRef) -> str:
    return quote(event.tag)
