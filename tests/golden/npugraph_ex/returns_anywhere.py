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
        _FINISHED()
        _LOGGED()


_FINISHED = functools.partial(_event, _EVENTS, "returns_anywhere.Early.finished")
_LOGGED = functools.partial(_event, _EVENTS, "returns_anywhere.Early.logged")


class Early(nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

    def route(self, x, skip):
        if skip:
            _FINISHED().record()
            return x
        for _ in range(2):
            if x.sum() > 0:
                out = x * 2
                _FINISHED().record()
                return out

        def helper(v):
            return v + 1  # a nested function's return is its own

        x = helper(x)
        out_1 = torch.relu(x)
        _FINISHED().record()
        return out_1

    def log(self, x):
        print(x.shape)
        _LOGGED().record()
