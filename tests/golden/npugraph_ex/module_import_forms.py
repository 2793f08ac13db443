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
        _DONE()


def _clone(value):
    """``value`` with each tensor in it cloned, rebuilding tuples, named tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_clone(item) for item in value])
    if isinstance(value, (tuple, list)):
        return type(value)([_clone(item) for item in value])
    if isinstance(value, dict):
        return {key: _clone(item) for key, item in value.items()}
    return value


_DONE = functools.partial(_event, _EVENTS, "module_import_forms.Aliased.done")


class Aliased(nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

    def first(self, x):
        out = x + 1
        _DONE().record()
        return out

    def second(self, x):
        out = x * 2
        out = _clone(out)
        return out
