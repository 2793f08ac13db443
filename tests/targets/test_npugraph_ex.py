"""The npugraph_ex target: torch.npu streams and events made lazily, core limits through set_stream_limit."""

from __future__ import annotations

from common_sources import AUTO, MANUAL
from targets_util import diagnostics, transform, user_code

HELPERS = '''import torch
import contextlib
import functools
from collections.abc import Iterator

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.npu.Event] = {}


def _event(tag: str) -> torch.npu.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.npu.Event()
    return _EVENTS[tag]


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


_READY = functools.partial(_event, "m.Block.ready")


'''

MANUAL_OUT = '''class Block(torch.nn.Module):
    def produce(self, x):
        caller_stream = torch.npu.current_stream()
        with (
            torch.npu.stream(_stream("side", 1)) if self.multistream else nullcontext(),
            _core_limit(8, 16) if self.limit else nullcontext(),
        ):
            out = x * 2
            if self.multistream:
                out.record_stream(caller_stream)
            _READY().record()
            return out

    def consume(self, x, scale: float = 2.0):
        caller_stream = torch.npu.current_stream()
        with torch.npu.stream(_stream("late", 0)):
            torch.npu.current_stream().wait_event(_READY())
            out = x * scale
            out = out.clone()
            out.record_stream(caller_stream)
            return out

    def back(self, x):
        torch.npu.current_stream().wait_event(_READY())
        return x + 1
'''

AUTO_OUT = '''class Shared(torch.nn.Module):
    def forward(self, x):
        caller_stream = torch.npu.current_stream()
        _SHARED_FORK().record()
        with torch.npu.stream(_stream("shared", 0)):
            torch.npu.current_stream().wait_event(_SHARED_FORK())
            x.record_stream(_stream("shared"))
            out = x * 2
            out.record_stream(caller_stream)
            _SHARED_JOIN().record()
            return out


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Shared()

    def forward(self, x):
        s = self.shared(x)
        y = x + 1
        torch.npu.current_stream().wait_event(_SHARED_JOIN())
        return y + s
'''


def test_helpers_core_limit_and_events() -> None:
    code = transform(MANUAL, "npugraph_ex")
    assert code.replace("from contextlib import nullcontext\n", "") == HELPERS + MANUAL_OUT
    assert "NPD590 warning" not in " ".join(diagnostics(MANUAL, "npugraph_ex"))


def test_automatic_fork_join_and_keep_output() -> None:
    code = transform(AUTO, "npugraph_ex")
    assert user_code(code) == AUTO_OUT
    assert "_core_limit" not in code and "import contextlib" not in code
