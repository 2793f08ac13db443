import torch
from torch import nn


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


class Aliased(nn.Module):
    def first(self, x):
        return x + 1

    def second(self, x):
        out = x * 2
        out = _clone(out)
        return out
