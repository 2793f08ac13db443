"""This file never names npudsl; its call site is seen because the run sees both files."""

import torch
import torchair
from shared_expert import _SHARED_EXPERT_JOIN
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


class DecoderLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.shared = SharedExpert(hidden)
        self.routed = nn.Linear(hidden, hidden)

    def forward(self, x):
        if self.shared.multistream:
            _record_tagged_stream(x, "shared")
        shared = self.shared(x, join=False)
        routed = self.routed(x)
        if self.shared.multistream:
            torchair.ops.npu_tagged_event_wait(_SHARED_EXPERT_JOIN)
            _record_tagged_stream(shared, "default")
        return shared + routed
