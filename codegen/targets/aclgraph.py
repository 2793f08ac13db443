"""torchair reduce-overhead (aclgraph): stream switches, tagged events, tagged record_stream."""

from __future__ import annotations

import attrs

from codegen.plan import Clone, Context, EventRef, KeepAlive, LimitCores, Record, Step, SwitchStream, Wait
from codegen.targets.base import clone_statement, quote

__all__ = ["AclGraph"]


@attrs.frozen
class AclGraph:
    name: str = "aclgraph"

    def context(self, context: Context) -> str | None:
        if isinstance(context, SwitchStream):
            if context.tag == "default":
                return None  # the main stream is where the graph runs; torchair switches to side streams only
            return f"torchair.scope.npu_stream_switch({quote(context.tag)}, {context.priority})"
        if isinstance(context, LimitCores):
            return f"torchair.scope.limit_core_num({context.aicore}, {context.vector})"
        raise TypeError(context)

    def statements(self, step: Step, values: tuple[str, ...]) -> list[str]:
        if isinstance(step, Record):
            return [f"torchair.ops.npu_tagged_event_record({step.event.var})"]
        if isinstance(step, Wait):
            return [f"torchair.ops.npu_tagged_event_wait({step.event.var})"]
        if isinstance(step, KeepAlive):
            return [f"torchair.ops.npu_record_tagged_stream({v}, {quote(step.stream)})" for v in values]
        if isinstance(step, Clone):
            return clone_statement(step, values)
        raise TypeError(step)

    def define_event(self, event: EventRef) -> str | None:
        return f"{event.var} = torchair.ops.npu_create_tagged_event(tag={quote(event.tag)})"

    def imports(self, *, events: bool) -> list[str]:
        return ["import torchair"]

    def module_comment(self) -> str | None:
        return "# Tagged events are process-global: each is created once, here."
