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


_GO = functools.partial(_event, "stacking_order_a.Ordered.go")
_DONE = functools.partial(_event, "stacking_order_a.Ordered.done")


class Ordered(nn.Module):
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
