from contextlib import nullcontext

import torch
import torchair
from torch import nn

import config


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
_READY = _tagged_event("when_guards.Guarded.ready", __file__)
_SIDE_FORK = _tagged_event("when_guards.Guarded.side.fork", __file__)
_SIDE_JOIN = _tagged_event("when_guards.Guarded.side.join", __file__)


class Guarded(nn.Module):
    def __init__(self, multistream=True):
        super().__init__()
        self.multistream = multistream

    def side(self, x):
        with torchair.scope.limit_core_num(8, 16) if config.LIMIT_CORES else nullcontext():
            return x * 2

    def produce(self, x):
        out = x * 3
        if self.multistream:
            torchair.ops.npu_tagged_event_record(_READY)
        return out

    def consume(self, x):
        if self.multistream:
            torchair.ops.npu_tagged_event_wait(_READY)
        return x + 1

    def forward(self, x):
        if self.multistream:
            torchair.ops.npu_tagged_event_record(_SIDE_FORK)
        with torchair.scope.npu_stream_switch("side", 0) if self.multistream else nullcontext():
            if self.multistream:
                torchair.ops.npu_tagged_event_wait(_SIDE_FORK)
                _record_tagged_stream(x, "side")
            y = self.side(x)
            if self.multistream:
                torchair.ops.npu_tagged_event_record(_SIDE_JOIN)
        z = x - 1
        if self.multistream:
            torchair.ops.npu_tagged_event_wait(_SIDE_JOIN)
        return y + z
