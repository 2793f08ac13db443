"""torchair reduce-overhead (aclgraph): stream switches, tagged events, tagged record_stream, core limits."""

from __future__ import annotations

import attrs

from codegen.lower.hygiene import ModuleNames
from codegen.lower.plan import Context, CurrentStream, EventRef, ForkWait, LimitCores, Record, Step, Value, Wait
from codegen.targets.base import Spelling, is_tensor, quote
from codegen.targets.helpers import CLONE, RECORD

__all__ = ["AclGraph", "TorchairSpelling", "tag_text"]

_DOC = "``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists and dicts."

# torchair keeps tagged events by tag, process-wide, and refuses to make a tag twice (ValueError): a module
# run again (importlib.reload) or a second module that names the same shared event finds it made. Records
# and waits name the tag (torch.ops.air's ops, which torchair's npu_tagged_event_record/wait trace to), so
# the generated module keeps no table of its own and puts none on torchair.
_TAGGED_EVENT = '''def {name}(tag: str) -> str:
    """``tag``, with torchair's event made for it unless this process has one already."""
    try:
        TORCHAIR.ops.npu_create_tagged_event(tag=tag)
    except ValueError:  # made already: a reload, or another module that names the same shared event
        pass
    return tag
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
            return [f"{self.use('torch')}.ops.air.tagged_event_record({step.event.var})"]
        if isinstance(step, Wait):
            return [f"{self.use('torch')}.ops.air.tagged_event_wait({step.event.var})"]
        if isinstance(step, ForkWait):
            return []
        raise TypeError(step)

    def keep_alive(self, value: Value, stream: str | CurrentStream) -> list[str]:
        record = f"{self.torchair}.ops.npu_record_tagged_stream"
        if is_tensor(value):
            return [f"{record}({value.name}, {tag_text(stream)})"]
        torch = self.use("torch")
        source = (
            RECORD.replace("RECORD_DOC", _DOC)
            .replace("RECORD_CALL", f"{record}(value, stream)")
            .replace("TORCH", torch)
        )
        return [f"{self.helper('_record_tagged_stream', source)}({value.name}, {tag_text(stream)})"]

    def define_event(self, event: EventRef) -> str | None:
        source = _TAGGED_EVENT.replace("TORCHAIR", self.torchair)
        return f"{event.var} = {self.helper('_tagged_event', source)}({self._tag(event)})"

    @staticmethod
    def _tag(event: EventRef) -> str:
        """An event the module defines is tagged after the module as imported (``__name__``: unique in the
        process); a shared event by its name, the same in every module."""
        if event.shared or not event.scope:
            return quote(event.tag)
        return f'f"{{__name__}}.{event.scope}"'

    def event_comment(self) -> str | None:
        return "# torchair's tagged events, made once per process and named by tag."


@attrs.frozen
class AclGraph:
    name: str = "aclgraph"
    event_sync: bool = True

    def spelling(self, names: ModuleNames) -> Spelling:
        return _Spelling(names=names)
