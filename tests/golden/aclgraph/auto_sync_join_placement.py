import torch
import torchair
from torch import nn


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
_SIDE_FORK = _tagged_event(f"{__name__}.Overlap.side.fork")
_SIDE_JOIN = _tagged_event(f"{__name__}.Overlap.side.join")


class Overlap(nn.Module):
    def side(self, x):
        return x.exp()

    def forward(self, x, flag: bool):
        torch.ops.air.tagged_event_record(_SIDE_FORK)
        with torchair.scope.npu_stream_switch("side", 0):
            torch.ops.air.tagged_event_wait(_SIDE_FORK)
            _record_tagged_stream(x, "side")
            s = self.side(x)
            torch.ops.air.tagged_event_record(_SIDE_JOIN)
        a = x * 2
        b = a + 1
        torch.ops.air.tagged_event_wait(_SIDE_JOIN)
        if flag:
            b = b + s
        return b

    def discarded(self, x):
        self.side(x)
        return x + 1
