"""This file never names npudsl; its call site is seen because the run sees both files."""

from contextlib import nullcontext

import torch
import torchair
from torch import nn

from shared_expert import SharedExpert


def _record_tagged_stream(value, stream, objects=True) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            _record_tagged_stream(item, stream, False)


def _tagged_event(tag: str) -> str:
    """``tag``, with torchair's event made for it unless this process has one already."""
    try:
        torchair.ops.npu_create_tagged_event(tag=tag)
    except ValueError:  # made already: a reload, or another module that names the same shared event
        pass
    return tag


# torchair's tagged events, made once per process and named by tag.
_SHARED_EXPERT_FORK = _tagged_event(f"{__name__}.shared_expert.SharedExpert.forward.fork")
_SHARED_EXPERT_JOIN = _tagged_event(f"{__name__}.shared_expert.SharedExpert.forward.join")


class DecoderLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.shared = SharedExpert(hidden)
        self.routed = nn.Linear(hidden, hidden)

    def forward(self, x):
        if self.shared.multistream:
            torch.ops.air.tagged_event_record(_SHARED_EXPERT_FORK)
        with torchair.scope.npu_stream_switch("shared", 0) if self.shared.multistream else nullcontext():
            if self.shared.multistream:
                torch.ops.air.tagged_event_wait(_SHARED_EXPERT_FORK)
                _record_tagged_stream(x, "shared")
            shared = self.shared(x)
            if self.shared.multistream:
                torch.ops.air.tagged_event_record(_SHARED_EXPERT_JOIN)
        routed = self.routed(x)
        if self.shared.multistream:
            torch.ops.air.tagged_event_wait(_SHARED_EXPERT_JOIN)
        return shared + routed
