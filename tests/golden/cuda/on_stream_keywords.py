import torch
from torch import nn

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.cuda.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.cuda.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.cuda.Stream(priority=-priority)
    return _STREAMS[tag]


class Block(nn.Module):
    def branch(self, x):
        with torch.cuda.stream(_stream("side", 1)):
            return torch.relu(x)
