# A header comment stays where it is.
import torch
import torchair
from torch import nn


def _record_tagged_stream(value, stream) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream)


class Commented(nn.Module):
    # Above the decorators.
    # Between decorators and def.
    def branch(self, x):  # trailing on def
        with torchair.scope.npu_stream_switch("side", 0):
            _record_tagged_stream(x, "side")
            # first line of the body
            y = x + 1  # trailing on a statement

            # after a blank line
            _record_tagged_stream(y, "default")
            return y  # trailing on return

    @torch.no_grad()
    # Above a decorator that goes, after one that stays.
    # on the decorator's line
    def after_kept(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            _record_tagged_stream(x, "side")
            out = x * 2
            _record_tagged_stream(out, "default")
            return out
