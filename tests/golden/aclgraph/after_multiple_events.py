import torch
import torchair
from torch import nn

_TAGGED_EVENTS = vars(torchair.ops).setdefault("npudsl_tagged_events", {})


def _tagged_event(tag: str, origin: str | None = None):
    """The event tagged ``tag``, created once per process. A class's event names its source file ``origin``:
    this file run again (reload, another module name) gets the same event, another file that made ``tag``
    first gets its own. A shared event (``"ns:name"``) names none: it is one event in every file."""
    if origin is not None and _TAGGED_EVENTS.get(tag, (origin,))[0] != origin:
        tag = f"{tag}@{origin}"
    if tag not in _TAGGED_EVENTS:
        _TAGGED_EVENTS[tag] = (origin, torchair.ops.npu_create_tagged_event(tag=tag))
    return _TAGGED_EVENTS[tag][1]


# Tagged events are process-global: each is made here, once per process.
_LEFT_DONE = _tagged_event("after_multiple_events.Fan.left_done", __file__)
_RIGHT_DONE = _tagged_event("after_multiple_events.Fan.right_done", __file__)
_BOTH_READ = _tagged_event("after_multiple_events.Fan.both_read", __file__)
_MERGED = _tagged_event("after_multiple_events.Fan.merged", __file__)


class Fan(nn.Module):
    def left(self, x):
        out = x * 2
        torchair.ops.npu_tagged_event_record(_LEFT_DONE)
        return out

    def right(self, x):
        out = x * 3
        torchair.ops.npu_tagged_event_record(_RIGHT_DONE)
        return out

    def merge(self, left, right):
        torchair.ops.npu_tagged_event_wait(_LEFT_DONE)
        torchair.ops.npu_tagged_event_wait(_RIGHT_DONE)
        out = left + right
        torchair.ops.npu_tagged_event_record(_BOTH_READ)
        torchair.ops.npu_tagged_event_record(_MERGED)
        return out
