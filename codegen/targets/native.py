"""Native streams and events of a device module (``torch.cuda``, ``torch.npu``): the shared spelling.

Streams and events are created on first use, once per process, through two small module-level
registries, so importing the generated module touches no device. Every event variable is a
``functools.partial`` of the defining module's ``_event``: a module that imports it shares the one event.
"""

from __future__ import annotations

import attrs

from codegen.plan import (
    Clone,
    Context,
    EventRef,
    FunctionPlan,
    KeepAlive,
    ModulePlan,
    Record,
    Step,
    SwitchStream,
    Wait,
)
from codegen.targets.base import clone_statement, quote

__all__ = ["CALLER_STREAM", "Native", "function_steps", "helper", "module_steps"]

CALLER_STREAM = "caller_stream"  # the stream a side-stream function was called on, read before switching


@attrs.frozen(kw_only=True)
class Native:
    """What the CUDA and NPU spellings share; ``device`` is ``torch.cuda`` or ``torch.npu``."""

    device: str

    def switch(self, context: SwitchStream) -> str | None:
        if context.tag == "default":
            return None  # the caller's stream already is the main stream, or the caller chose another
        return f"{self.device}.stream(_stream({quote(context.tag)}, {context.priority}))"

    def step(self, step: Step, values: tuple[str, ...], record_stream: str) -> list[str]:
        if isinstance(step, Record):
            return [f"{step.event.var}().record()"]
        if isinstance(step, Wait):
            return [f"{self.device}.current_stream().wait_event({step.event.var}())"]
        if isinstance(step, KeepAlive):
            stream = CALLER_STREAM if step.stream == "default" else f"_stream({quote(step.stream)})"
            return [record_stream.format(tensor=v, stream=stream) for v in values]
        if isinstance(step, Clone):
            return clone_statement(step, values)
        raise TypeError(step)

    def define_event(self, event: EventRef) -> str:
        return f"{event.var} = functools.partial(_event, {quote(event.tag)})"

    def entry_lines(self, plan: FunctionPlan) -> list[str]:
        keeps = any(isinstance(s, KeepAlive) and s.stream == "default" for s in plan.epilogue)
        return [f"{CALLER_STREAM} = {self.device}.current_stream()"] if keeps else []

    def registries(self, plan: ModulePlan) -> str:
        """The ``_stream`` / ``_event`` registries this module uses, as source text."""
        streams = any(c.tag != "default" for c in module_steps(plan, SwitchStream)) or any(
            s.stream != "default" for s in module_steps(plan, KeepAlive))
        events = any(e.source is None for e in plan.events)
        parts = [helper(_STREAM, self.device)] if streams else []
        parts += [helper(_EVENT, self.device)] if events else []
        return "".join(parts)

    def comment(self, helpers: str) -> str:
        """``helpers`` under the comment that says why they exist."""
        return f"\n{_COMMENT}\n{helpers.lstrip()}" if helpers else ""


def function_steps(plan: FunctionPlan) -> tuple[Context | Step, ...]:
    return (*plan.contexts, *plan.before, *plan.prologue, *plan.epilogue)


def module_steps(plan: ModulePlan, kind: type) -> list:  # type: ignore[type-arg]
    """Every context or step of ``kind`` in the module's functions."""
    return [s for p in plan.functions.values() for s in function_steps(p) if isinstance(s, kind)]


def helper(template: str, device: str) -> str:
    """A module-level helper, preceded by two blank lines."""
    return "\n\n" + template.replace("DEVICE", device)


_COMMENT = "# Streams and events are created on first use, once per process: importing this module touches no device."

_STREAM = '''_STREAMS: dict[str, DEVICE.Stream] = {}


def _stream(tag: str, priority: int = 0) -> DEVICE.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = DEVICE.Stream(priority=-priority)
    return _STREAMS[tag]
'''

_EVENT = '''_EVENTS: dict[str, DEVICE.Event] = {}


def _event(tag: str) -> DEVICE.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = DEVICE.Event()
    return _EVENTS[tag]
'''
