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


_FINISHED = functools.partial(_event, "returns_anywhere.Early.finished")
_LOGGED = functools.partial(_event, "returns_anywhere.Early.logged")


class Early(nn.Module):
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
