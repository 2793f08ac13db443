"""Two concurrent streams that split the device's cores between them (seed 004).

What overlaps with what: the side branch runs on the "side" stream, capped at 8
cube and 16 vector cores, while the main branch runs on the main stream, capped
at 16 cube and 32 vector cores. The two caps add up to an Atlas A2's 24 cube and
48 vector cores, so neither stream can starve the other: a collective on one
stream never waits for cores held by the other, which is what deadlocks
multi-card runs when every stream may take every core.
"""

import functools

import torch
from torch import nn

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.npu.Event] = {}


def _event(table: dict[str, torch.npu.Event], tag: str) -> torch.npu.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.npu.Event()
    return table[tag]


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.npu.is_available():
        _stream("side", 0)
        _SIDE_BRANCH_FORK()
        _SIDE_BRANCH_JOIN()


def _record_stream(value, stream, objects=True) -> None:
    """``record_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."""
    if isinstance(value, torch.Tensor):
        value.record_stream(stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            _record_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            _record_stream(item, stream, False)


_SIDE_BRANCH_FORK = functools.partial(_event, _EVENTS, "core_split.CoreSplitBlock.side_branch.fork")
_SIDE_BRANCH_JOIN = functools.partial(_event, _EVENTS, "core_split.CoreSplitBlock.side_branch.join")


class CoreSplitBlock(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.side_proj = nn.Linear(hidden, hidden)
        self.main_proj = nn.Linear(hidden, hidden)
        _create_streams()

    def side_branch(self, x):
        with torch.npu.npugraph_ex.scope.limit_core_num(8, 16):
            return torch.relu(self.side_proj(x))

    def main_branch(self, x):
        with torch.npu.npugraph_ex.scope.limit_core_num(16, 32):
            return torch.tanh(self.main_proj(x))

    def forward(self, x):
        _SIDE_BRANCH_FORK().record()
        with torch.npu.stream(_stream("side", 0)):
            torch.npu.current_stream().wait_event(_SIDE_BRANCH_FORK())
            _record_stream(x, _stream("side"))
            side = self.side_branch(x)
            _SIDE_BRANCH_JOIN().record()
        main = self.main_branch(x)
        torch.npu.current_stream().wait_event(_SIDE_BRANCH_JOIN())
        return main + side


def example_inputs(tokens: int = 16, hidden: int = 64) -> tuple[torch.Tensor, ...]:
    return (torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(0)),)
