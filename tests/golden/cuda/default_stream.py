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


_SIDE_DONE = functools.partial(_event, "default_stream.BackToMain.side_done")


class BackToMain(nn.Module):
    def side(self, x):
        out = x * 2
        _SIDE_DONE().record()
        return out

    def main(self, x):
        torch.cuda.current_stream().wait_event(_SIDE_DONE())
        return x + 1
