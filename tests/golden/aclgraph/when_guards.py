from contextlib import nullcontext

import torch
import torchair
from torch import nn

import config


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
_READY = _tagged_event(f"{__name__}.Guarded.ready")
_SIDE_FORK = _tagged_event(f"{__name__}.Guarded.side.fork")
_SIDE_JOIN = _tagged_event(f"{__name__}.Guarded.side.join")


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
            torch.ops.air.tagged_event_record(_READY)
        return out

    def consume(self, x):
        if self.multistream:
            torch.ops.air.tagged_event_wait(_READY)
        return x + 1

    def forward(self, x):
        if self.multistream:
            torch.ops.air.tagged_event_record(_SIDE_FORK)
        with torchair.scope.npu_stream_switch("side", 0) if self.multistream else nullcontext():
            if self.multistream:
                torch.ops.air.tagged_event_wait(_SIDE_FORK)
                _record_tagged_stream(x, "side")
            y = self.side(x)
            if self.multistream:
                torch.ops.air.tagged_event_record(_SIDE_JOIN)
        z = x - 1
        if self.multistream:
            torch.ops.air.tagged_event_wait(_SIDE_JOIN)
        return y + z
