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


# Tagged events are process-global: each is created once, here.
_FINISHED = torchair.ops.npu_create_tagged_event(tag="returns_anywhere.Early.finished")
_LOGGED = torchair.ops.npu_create_tagged_event(tag="returns_anywhere.Early.logged")


class Early(nn.Module):
    def route(self, x, skip):
        with torchair.scope.npu_stream_switch("side", 0):
            _record_tagged_stream(x, "side")
            _record_tagged_stream(skip, "side")
            if skip:
                _record_tagged_stream(x, "default")
                torchair.ops.npu_tagged_event_record(_FINISHED)
                return x
            for _ in range(2):
                if x.sum() > 0:
                    out = x * 2
                    _record_tagged_stream(out, "default")
                    torchair.ops.npu_tagged_event_record(_FINISHED)
                    return out

            def helper(v):
                return v + 1  # a nested function's return is its own

            x = helper(x)
            out_1 = torch.relu(x)
            _record_tagged_stream(out_1, "default")
            torchair.ops.npu_tagged_event_record(_FINISHED)
            return out_1

    def log(self, x):
        print(x.shape)
        torchair.ops.npu_tagged_event_record(_LOGGED)
