import torch
import torchair
from torch import nn

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> the token its last record made (torchair.ops.record)


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
        with torchair.scope.npu_stream_switch("side", 0):
            out = x + 1
            _EVENT_TOKENS["module_import_forms.Aliased.done"] = torchair.ops.record()
            return out

    def second(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            out = x * 2
            out = _clone(out)
            return out
