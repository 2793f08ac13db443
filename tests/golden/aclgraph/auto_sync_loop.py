import torch
import torchair
from torch import nn


def _record_tagged_stream(value, stream) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream)


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
_SIDE_FORK = _tagged_event("auto_sync_loop.Looped.side.fork", __file__)
_SIDE_JOIN = _tagged_event("auto_sync_loop.Looped.side.join", __file__)


class Looped(nn.Module):
    def side(self, x):
        return x.sin()

    def forward(self, x):
        side_forked = False
        acc = torch.zeros_like(x)
        for step in range(3):
            torchair.ops.npu_tagged_event_record(_SIDE_FORK)
            with torchair.scope.npu_stream_switch("side", 0):
                torchair.ops.npu_tagged_event_wait(_SIDE_FORK)
                _record_tagged_stream(x, "side")
                s = self.side(x)
                torchair.ops.npu_tagged_event_record(_SIDE_JOIN)
            side_forked = True
            x = x + step
        if side_forked:
            torchair.ops.npu_tagged_event_wait(_SIDE_JOIN)
        return acc + x
