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
        _GO()
        _DONE()


_GO = functools.partial(_event, _EVENTS, "stacking_order_b.Ordered.go")
_DONE = functools.partial(_event, _EVENTS, "stacking_order_b.Ordered.done")


class Ordered(nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

    def start(self, x):
        out = x + 1
        _GO().record()
        return out

    def work(self, x):
        with torch.npu.npugraph_ex.scope.limit_core_num(4, 8):
            torch.npu.current_stream().wait_event(_GO())
            out = x * 2
            _DONE().record()
            return out

    def finish(self, y):
        torch.npu.current_stream().wait_event(_DONE())
        return y - 1
