import functools

import torch
from torch import nn

# Streams and events: one per tag in the process (the tables live on the device module, where every
# generated module finds them), made when the model is built, else on first use. Importing touches no device.
_EVENTS: dict[str, torch.cuda.Event] = vars(torch.cuda).setdefault("npudsl_events", {})


def _event(tag: str) -> torch.cuda.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.cuda.Event()
    return _EVENTS[tag]


_GO = functools.partial(_event, "stacking_order_b.Ordered.go")
_DONE = functools.partial(_event, "stacking_order_b.Ordered.done")


class Ordered(nn.Module):
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
