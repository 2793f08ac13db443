import torch
from torch import nn

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


class Producer(nn.Module):
    def pair(self, x):
        caller_stream = torch.npu.current_stream()
        with torch.npu.stream(_stream("side", 0)):
            a = x + 1
            out = x * 2
            a.record_stream(caller_stream)
            out.record_stream(caller_stream)
            return a, out
