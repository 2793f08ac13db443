"""torchair reduce-overhead (aclgraph): stream switches, tagged events, tagged record_stream, core limits."""

from __future__ import annotations

import attrs

from codegen.lower.plan import CurrentStream, EventRef, ForkWait, Record, Step, Value, Wait
from codegen.targets.base import is_tensor, picked, quote
from codegen.targets.helpers import RECORD
from codegen.targets.torchair import TorchairSpelling, tag_text

__all__ = ["AclGraphSpelling"]

_DOC = "``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."

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


@attrs.define(eq=False)
class AclGraphSpelling(TorchairSpelling):
    def step(self, step: Step) -> list[str]:
        if isinstance(step, Record):
            return [f"{self.use('torch')}.ops.air.tagged_event_record({picked(step.event, _var)})"]
        if isinstance(step, Wait):
            return [f"{self.use('torch')}.ops.air.tagged_event_wait({picked(step.event, _var)})"]
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


def _var(event: EventRef) -> str:
    return event.var
