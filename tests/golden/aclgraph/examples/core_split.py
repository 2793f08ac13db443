"""Two concurrent streams that split the device's cores between them (seed 004).

What overlaps with what: the side branch runs on the "side" stream, capped at 8
cube and 16 vector cores, while the main branch runs on the main stream, capped
at 16 cube and 32 vector cores. The two caps add up to an Atlas A2's 24 cube and
48 vector cores, so neither stream can starve the other: a collective on one
stream never waits for cores held by the other, which is what deadlocks
multi-card runs when every stream may take every core.
"""

import torch
import torchair
from torch import nn


def _record_tagged_stream(value, stream, objects=True) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            _record_tagged_stream(item, stream, False)


def _tagged_event(tag: str) -> str:
    """``tag``, with torchair's event made for it unless this process has one already."""
    try:
        torchair.ops.npu_create_tagged_event(tag=tag)
    except ValueError:  # made already: a reload, or another module that names the same shared event
        pass
    return tag


# torchair's tagged events, made once per process and named by tag.
_SIDE_BRANCH_FORK = _tagged_event(f"{__name__}.CoreSplitBlock.side_branch.fork")
_SIDE_BRANCH_JOIN = _tagged_event(f"{__name__}.CoreSplitBlock.side_branch.join")


class CoreSplitBlock(nn.Module):
    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.side_proj = nn.Linear(hidden, hidden)
        self.main_proj = nn.Linear(hidden, hidden)

    def side_branch(self, x):
        with torchair.scope.limit_core_num(8, 16):
            return torch.relu(self.side_proj(x))

    def main_branch(self, x):
        with torchair.scope.limit_core_num(16, 32):
            return torch.tanh(self.main_proj(x))

    def forward(self, x):
        torch.ops.air.tagged_event_record(_SIDE_BRANCH_FORK)
        with torchair.scope.npu_stream_switch("side", 0):
            torch.ops.air.tagged_event_wait(_SIDE_BRANCH_FORK)
            _record_tagged_stream(x, "side")
            side = self.side_branch(x)
            torch.ops.air.tagged_event_record(_SIDE_BRANCH_JOIN)
        main = self.main_branch(x)
        torch.ops.air.tagged_event_wait(_SIDE_BRANCH_JOIN)
        return main + side


def example_inputs(tokens: int = 16, hidden: int = 64) -> tuple[torch.Tensor, ...]:
    return (torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(0)),)
