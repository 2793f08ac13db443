import functools

import torch
from torch import nn

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
_EVENTS: dict[str, torch.cuda.Event] = {}


def _event(table: dict[str, torch.cuda.Event], tag: str) -> torch.cuda.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.cuda.Event()
    return table[tag]


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.cuda.is_available():
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
        torch.cuda.current_stream().wait_event(_GO())
        out = x * 2
        _DONE().record()
        return out

    def finish(self, y):
        torch.cuda.current_stream().wait_event(_DONE())
        return y - 1
