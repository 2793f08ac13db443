import torch
from torch import nn

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.cuda.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.cuda.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.cuda.Stream(priority=-priority)
    return _STREAMS[tag]


def _record_stream(tensor: torch.Tensor, stream: torch.cuda.Stream) -> None:
    """``tensor.record_stream(stream)``, except while a CUDA graph is captured eagerly, where it would keep
    the block alive until capture ends. Traced code always records."""
    if torch.compiler.is_compiling() or not torch.cuda.is_current_stream_capturing():
        tensor.record_stream(stream)


class Producer(nn.Module):
    def pair(self, x):
        caller_stream = torch.cuda.current_stream()
        with torch.cuda.stream(_stream("side", 0)):
            a = x + 1
            out = x * 2
            _record_stream(a, caller_stream)
            _record_stream(out, caller_stream)
            return a, out
