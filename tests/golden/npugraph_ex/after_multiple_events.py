import functools

import torch
from torch import nn

# Streams and events: one per tag in the process (the tables live on the device module, where every
# generated module finds them), made when the model is built, else on first use. Importing touches no device.
_EVENTS: dict[str, torch.npu.Event] = vars(torch.npu).setdefault("npudsl_events", {})


def _event(tag: str) -> torch.npu.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.npu.Event()
    return _EVENTS[tag]


_LEFT_DONE = functools.partial(_event, "after_multiple_events.Fan.left_done")
_RIGHT_DONE = functools.partial(_event, "after_multiple_events.Fan.right_done")
_BOTH_READ = functools.partial(_event, "after_multiple_events.Fan.both_read")
_MERGED = functools.partial(_event, "after_multiple_events.Fan.merged")


class Fan(nn.Module):
    def left(self, x):
        out = x * 2
        _LEFT_DONE().record()
        return out

    def right(self, x):
        out = x * 3
        _RIGHT_DONE().record()
        return out

    def merge(self, left, right):
        torch.npu.current_stream().wait_event(_LEFT_DONE())
        torch.npu.current_stream().wait_event(_RIGHT_DONE())
        out = left + right
        _BOTH_READ().record()
        _MERGED().record()
        return out
