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
_SIDE_FORK = _tagged_event(f"{__name__}.Looped.side.fork")
_SIDE_JOIN = _tagged_event(f"{__name__}.Looped.side.join")


class Looped(nn.Module):
    def side(self, x):
        return x.sin()

    def forward(self, x):
        side_forked = False
        acc = torch.zeros_like(x)
        for step in range(3):
            torch.ops.air.tagged_event_record(_SIDE_FORK)
            with torchair.scope.npu_stream_switch("side", 0):
                torch.ops.air.tagged_event_wait(_SIDE_FORK)
                _record_tagged_stream(x, "side")
                s = self.side(x)
                torch.ops.air.tagged_event_record(_SIDE_JOIN)
            side_forked = True
            x = x + step
        if side_forked:
            torch.ops.air.tagged_event_wait(_SIDE_JOIN)
        return acc + x
