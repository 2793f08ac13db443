import torch
from torch import nn
import contextlib
from collections.abc import Iterator

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


@contextlib.contextmanager
def _core_limit(aicore: int, vector: int) -> Iterator[None]:
    """The current stream's ops use at most ``aicore`` cube and ``vector`` vector cores; the previous
    limit comes back on exit."""
    stream = torch.npu.current_stream()
    previous = torch.npu.get_stream_limit(stream)
    torch.npu.set_stream_limit(stream, aicore, vector)
    try:
        yield
    finally:
        torch.npu.set_stream_limit(stream, previous["cube_core_num"], previous["vector_core_num"])


class Short(nn.Module):
    def documented(self, x):
        """The docstring stays first."""
        with torch.npu.stream(_stream("side", 0)):
            return x + 1

    def one_liner(self, x):
        with _core_limit(2, 4):
            return x - 1
