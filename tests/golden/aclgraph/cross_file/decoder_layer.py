"""This file never names npudsl; its call site is seen because the run sees both files."""

from contextlib import nullcontext

import torch
import torchair
from torch import nn

from shared_expert import SharedExpert


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
_SHARED_EXPERT_FORK = _tagged_event("shared_expert.SharedExpert.forward.fork", __file__)
_SHARED_EXPERT_JOIN = _tagged_event("shared_expert.SharedExpert.forward.join", __file__)


class DecoderLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.shared = SharedExpert(hidden)
        self.routed = nn.Linear(hidden, hidden)

    def forward(self, x):
        if self.shared.multistream:
            torchair.ops.npu_tagged_event_record(_SHARED_EXPERT_FORK)
        with torchair.scope.npu_stream_switch("shared", 0) if self.shared.multistream else nullcontext():
            if self.shared.multistream:
                torchair.ops.npu_tagged_event_wait(_SHARED_EXPERT_FORK)
                _record_tagged_stream(x, "shared")
            shared = self.shared(x)
            if self.shared.multistream:
                torchair.ops.npu_tagged_event_record(_SHARED_EXPERT_JOIN)
        routed = self.routed(x)
        if self.shared.multistream:
            torchair.ops.npu_tagged_event_wait(_SHARED_EXPERT_JOIN)
        return shared + routed
