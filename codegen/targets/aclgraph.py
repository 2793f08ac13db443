"""torchair reduce-overhead (aclgraph): stream switches, tagged events, tagged record_stream, core limits."""

from __future__ import annotations

import attrs

from codegen.hygiene import ModuleNames
from codegen.plan import Context, CurrentStream, EventRef, ForkWait, LimitCores, Record, Step, Value, Wait
from codegen.targets.base import Spelling, is_tensor, quote
from codegen.targets.helpers import CLONE, RECORD

__all__ = ["AclGraph", "TorchairSpelling", "tag_text"]

_DOC = "``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists and dicts."

# torchair raises ValueError when a tag is created twice, and a module may run again in one process
# (importlib.reload, an import under another name, npudsl.compile's twin): the table lives on
# torchair.ops, where every copy of every generated module finds it.
_TAGGED_EVENT = '''_TAGGED_EVENTS = vars(TORCHAIR.ops).setdefault("npudsl_tagged_events", {})


def {name}(tag: str, origin: str | None = None):
    """The event tagged ``tag``, created once per process. A class's event names its source file ``origin``:
    this file run again (reload, another module name) gets the same event, another file that made ``tag``
    first gets its own. A shared event (``"ns:name"``) names none: it is one event in every file."""
    if origin is not None and _TAGGED_EVENTS.get(tag, (origin,))[0] != origin:
        tag = f"{tag}@{origin}"
    if tag not in _TAGGED_EVENTS:
        _TAGGED_EVENTS[tag] = (origin, TORCHAIR.ops.npu_create_tagged_event(tag=tag))
    return _TAGGED_EVENTS[tag][1]
'''


def tag_text(stream: str | CurrentStream) -> str:
    """The tag of ``stream`` as torchair names it (``"default"`` is the main stream). Tags are static: the
    stream a callee was called on is taken to be the main one, and code in a side-stream function runs on
    that function's stream when its guard holds."""
    if isinstance(stream, CurrentStream):
        if stream.tag == "default" or stream.when is None:
            return quote(stream.tag)
        return f"{quote(stream.tag)} if {stream.when.text} else {quote('default')}"
    return quote(stream)


@attrs.define(eq=False)
class TorchairSpelling(Spelling):
    """What aclgraph and GE spell alike: the torchair scopes."""

    @property
    def torchair(self) -> str:
        return self.use("torchair")

    def context(self, context: Context) -> str | None:
        if isinstance(context, LimitCores):
            return f"{self.torchair}.scope.limit_core_num({context.aicore}, {context.vector})"
        if context.tag == "default":
            return None  # torchair switches to side streams only; the main stream is where the graph runs
        return f"{self.torchair}.scope.npu_stream_switch({quote(context.tag)}, {context.priority})"

    def clone(self, value: Value) -> str:
        if is_tensor(value):
            return f"{value.name}.clone()"
        torch = self.use("torch")
        return f"{self.helper('_clone', CLONE.replace('TORCH', torch))}({value.name})"


@attrs.define(eq=False)
class _Spelling(TorchairSpelling):
    def step(self, step: Step) -> list[str]:
        if isinstance(step, Record):
            return [f"{self.torchair}.ops.npu_tagged_event_record({step.event.var})"]
        if isinstance(step, Wait):
            return [f"{self.torchair}.ops.npu_tagged_event_wait({step.event.var})"]
        if isinstance(step, ForkWait):
            return []
        raise TypeError(step)

    def keep_alive(self, value: Value, stream: str | CurrentStream) -> list[str]:
        record = f"{self.torchair}.ops.npu_record_tagged_stream"
        if is_tensor(value):
            return [f"{record}({value.name}, {tag_text(stream)})"]
        torch = self.use("torch")
        source = RECORD.replace("RECORD_DOC", _DOC).replace(
            "RECORD_CALL", f"{record}(value, stream)").replace("TORCH", torch)
        return [f"{self.helper('_record_tagged_stream', source)}({value.name}, {tag_text(stream)})"]

    def define_event(self, event: EventRef) -> str | None:
        table = self.names.global_name("_TAGGED_EVENTS")
        source = _TAGGED_EVENT.replace("_TAGGED_EVENTS", table).replace("TORCHAIR", self.torchair)
        origin = "" if event.shared else ", __file__"
        return f"{event.var} = {self.helper('_tagged_event', source)}({quote(event.tag)}{origin})"

    def event_comment(self) -> str | None:
        return "# Tagged events are process-global: each is made here, once per process."


@attrs.frozen
class AclGraph:
    name: str = "aclgraph"
    event_sync: bool = True

    def spelling(self, names: ModuleNames) -> Spelling:
        return _Spelling(names=names)
