# A header comment stays where it is.
import torch
from torch import nn

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.cuda.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.cuda.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.cuda.Stream(priority=-priority)
    return _STREAMS[tag]


class Commented(nn.Module):
    # Above the decorators.
    # Between decorators and def.
    def branch(self, x):  # trailing on def
        with torch.cuda.stream(_stream("side", 0)):
            # first line of the body
            y = x + 1  # trailing on a statement

            # after a blank line
            return y  # trailing on return
