import functools

import torch
from torch import nn

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
_EVENTS: dict[str, torch.npu.Event] = {}


def _event(table: dict[str, torch.npu.Event], tag: str) -> torch.npu.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.npu.Event()
    return table[tag]


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.npu.is_available():
        _LEFT_DONE()
        _RIGHT_DONE()
        _BOTH_READ()
        _MERGED()


_LEFT_DONE = functools.partial(_event, _EVENTS, "after_multiple_events.Fan.left_done")
_RIGHT_DONE = functools.partial(_event, _EVENTS, "after_multiple_events.Fan.right_done")
_BOTH_READ = functools.partial(_event, _EVENTS, "after_multiple_events.Fan.both_read")
_MERGED = functools.partial(_event, _EVENTS, "after_multiple_events.Fan.merged")


class Fan(nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

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
