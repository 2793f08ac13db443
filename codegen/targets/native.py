"""Native streams and events of a device module (``torch.cuda``, ``torch.npu``): the shared spelling.

Streams and events are created on first use through two small tables of the generated module itself,
so importing it touches no device. Every event variable is a ``functools.partial`` of the defining
module's ``_event``: a module that imports it shares the one event. A shared event (``"ns:name"``) is
kept in one table for the process, the namespace of a module registered in ``sys.modules`` by the first
generated module that needs it (no state on the device module or any other module not generated).
"""

from __future__ import annotations

import attrs

from codegen.lower.plan import (
    Context,
    CurrentStream,
    EventRef,
    ForkWait,
    LimitCores,
    Record,
    Step,
    Value,
    Wait,
)
from codegen.targets.base import Spelling, indent, is_tensor, picked, quote
from codegen.targets.helpers import CLONE, RECORD

__all__ = ["RECORD_DOC", "NativeSpelling"]

RECORD_DOC = "``record_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."

_COMMENT = (
    "# This module's streams and events, one per tag, made when the model is built, else on first use:\n"
    "# importing the module touches no device."
)
_ORDER = ("_stream", "_EVENTS", "_SHARED_EVENTS", "_event", "_create_streams", "_record_stream", "_clone")

_STREAM = '''_STREAMS: dict[str, DEVICE.Stream] = {}


def {name}(tag: str, priority: int = 0) -> DEVICE.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = DEVICE.Stream(priority=-priority)
    return _STREAMS[tag]
'''

_EVENT = '''def {name}(table: dict[str, DEVICE.Event], tag: str) -> DEVICE.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = DEVICE.Event()
    return table[tag]
'''

# A shared event must be one object for every module that records or waits for it, whichever of them the
# run transformed: the table is the namespace of a module of its own, registered by the first that needs it.
_SHARED = """# Shared events ("ns:name"): one per process, whichever module records or waits for them.
{name}: dict[str, DEVICE.Event] = SYS.modules.setdefault(
    "npudsl_shared_events", TYPES.ModuleType("npudsl_shared_events")).__dict__
"""


_CREATE = '''def {name}() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if DEVICE.is_available():
BODY'''


@attrs.define(eq=False)
class NativeSpelling(Spelling):
    """``device`` is ``cuda`` or ``npu``."""

    device: str = "cuda"
    made_streams: dict[str, int] = attrs.Factory(dict)  # tag -> priority, for every stream the module names
    made_events: list[str] = attrs.Factory(list)  # the event variables the module defines

    @property
    def torch(self) -> str:
        return self.use("torch")

    def _device(self) -> str:
        return f"{self.torch}.{self.device}"

    def stream(self, tag: str, priority: int | None = None) -> str:
        if tag not in self.made_streams or priority is not None:
            self.made_streams[tag] = priority or self.made_streams.get(tag, 0)
        name = self.helper(
            "_stream", _STREAM.replace("_STREAMS", self.names.global_name("_STREAMS")).replace("DEVICE", self._device())
        )
        return f"{name}({quote(tag)}{'' if priority is None else f', {priority}'})"

    def event(self, event: EventRef) -> str:
        return f"{picked(event, lambda e: e.var)}()"

    def context(self, context: Context) -> str | None:
        if isinstance(context, LimitCores):
            return self.limit(context)
        if context.tag == "default":
            return None  # the caller's stream already is the main stream, or the caller chose another
        return f"{self._device()}.stream({self.stream(context.tag, context.priority)})"

    def limit(self, context: LimitCores) -> str | None:
        raise NotImplementedError

    def step(self, step: Step) -> list[str]:
        if isinstance(step, Record):
            return [f"{self.event(step.event)}.record()"]
        if isinstance(step, Wait):
            return [f"{self._device()}.current_stream().wait_event({self.event(step.event)})"]
        if isinstance(step, ForkWait):
            return []
        raise TypeError(step)

    def keep_alive(self, value: Value, stream: str | CurrentStream) -> list[str]:
        if isinstance(stream, CurrentStream):
            where = f"{self._device()}.current_stream()"
        else:
            where = self.stream(stream)
        return [f"{self.record_helper()}({value.name}, {where})"]

    def record_helper(self) -> str:
        source = (
            RECORD.replace("RECORD_DOC", RECORD_DOC)
            .replace("RECORD_CALL", "value.record_stream(stream)")
            .replace("TORCH", self.torch)
        )
        return self.helper("_record_stream", source)

    def clone(self, value: Value) -> str:
        if is_tensor(value):
            return f"{value.name}.clone()"
        return f"{self.helper('_clone', CLONE.replace('TORCH', self.torch))}({value.name})"

    def define_event(self, event: EventRef) -> str | None:
        registry = self.helper("_event", _EVENT.replace("DEVICE", self._device()))
        functools = self.use("functools")
        self.made_events.append(event.var)
        return f"{event.var} = {functools}.partial({registry}, {self._table(event)}, {quote(event.tag)})"

    def _table(self, event: EventRef) -> str:
        if not event.shared:
            return self.helper("_EVENTS", f"{{name}}: dict[str, {self._device()}.Event] = {{}}\n")
        source = (
            _SHARED.replace("DEVICE", self._device())
            .replace("SYS", self.use("sys"))
            .replace("TYPES", self.use("types"))
        )
        return self.helper("_SHARED_EVENTS", source)

    def construct_lines(self) -> list[str]:
        """What a class's ``__init__`` ends with: the module's streams and events made at construction."""
        return [f"{self.names.global_name('_create_streams')}()"]

    def helper_source(self) -> str:
        if "_create_streams" in self.names.generated:
            self._create_helper()
        order = {self.names.generated.get(w, w): i for i, w in enumerate(_ORDER)}
        self.helpers = dict(sorted(self.helpers.items(), key=lambda item: order.get(item[0], len(order))))
        source = super().helper_source()
        return f"\n\n{_COMMENT}{source}" if source else ""

    def _create_helper(self) -> None:
        lines = [f"{self.stream(tag, priority)}" for tag, priority in self.made_streams.items()]
        lines += [f"{var}()" for var in self.made_events]
        body = indent([f"    {line}" for line in lines] or ["    pass"])
        name = self.names.global_name("_create_streams")
        self.helpers[name] = _CREATE.replace("{name}", name).replace("DEVICE", self._device()).replace("BODY", body)
