import torch
from torch import nn


# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.npu.is_available():
        pass


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


class Head(nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

    def logits(self, x):
        out = x @ x.T
        out = _clone(out)
        return out
