"""Two concurrent streams that split the device's cores between them (seed 004).

What overlaps with what: the side branch runs on the "side" stream, capped at 8
cube and 16 vector cores, while the main branch runs on the main stream, capped
at 16 cube and 32 vector cores. The two caps add up to an Atlas A2's 24 cube and
48 vector cores, so neither stream can starve the other: a collective on one
stream never waits for cores held by the other, which is what deadlocks
multi-card runs when every stream may take every core.
"""

import torch
from torch import nn
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


_SIDE_BRANCH_FORK = functools.partial(_event, "core_split.CoreSplitBlock.side_branch.fork")
_SIDE_BRANCH_JOIN = functools.partial(_event, "core_split.CoreSplitBlock.side_branch.join")


class CoreSplitBlock(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.side_proj = nn.Linear(hidden, hidden)
        self.main_proj = nn.Linear(hidden, hidden)

    def side_branch(self, x):
        _SIDE_BRANCH_FORK().record()
        with torch.npu.stream(_stream("side", 0)), _core_limit(8, 16):
            torch.npu.current_stream().wait_event(_SIDE_BRANCH_FORK())
            x.record_stream(_stream("side"))
            out = torch.relu(self.side_proj(x))
            _SIDE_BRANCH_JOIN().record()
            return out

    def main_branch(self, x):
        with _core_limit(16, 32):
            return torch.tanh(self.main_proj(x))

    def forward(self, x):
        side = self.side_branch(x)
        main = self.main_branch(x)
        torch.npu.current_stream().wait_event(_SIDE_BRANCH_JOIN())
        return main + side


def example_inputs(tokens: int = 16, hidden: int = 64) -> tuple[torch.Tensor, ...]:
    return (torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(0)),)
