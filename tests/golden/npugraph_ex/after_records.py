import functools

import torch
from torch import nn

# Streams and events: one per tag in the process (the tables live on the device module, where every
# generated module finds them), made when the model is built, else on first use. Importing touches no device.
_EVENTS: dict[str, torch.npu.Event] = vars(torch.npu).setdefault("npudsl_events", {})


def _event(tag: str) -> torch.npu.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.npu.Event()
    return _EVENTS[tag]


_READY = functools.partial(_event, "after_records.Pipeline.ready")


class Pipeline(nn.Module):
    def produce(self, x):
        out = x + 1
        _READY().record()
        return out

    def consume(self, y):
        torch.npu.current_stream().wait_event(_READY())
        return y.sum()
