"""Seed 000 (torchair multi-stream in reduce-overhead mode), written with npudsl decorators.

What overlaps with what: on the main stream, ``add`` then ``mm1`` and the ``C``
work; on stream "1", ``matmul`` (after ``add`` has finished, through the event
``add_done``) and then ``side_sum``; on stream "2", ``late_add`` once ``matmul``
has finished (event ``mm_done``). Every wait is placed by hand (``sync="manual"``),
exactly as the seed does, so the transformed forward issues the seed's calls.
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
_ADD_DONE = _tagged_event(f"{__name__}.Model.add_done")
_MM_DONE = _tagged_event(f"{__name__}.Model.mm_done")


class Model(nn.Module):
    def add(self, in1, in2):
        out = torch.add(in1, in2)
        torch.ops.air.tagged_event_record(_ADD_DONE)
        return out

    def matmul(self, in3, in4):
        torch.ops.air.tagged_event_wait(_ADD_DONE)
        out = torch.mm(in3, in4)
        torch.ops.air.tagged_event_record(_MM_DONE)
        return out

    # B is made on stream "1" and dropped on the main stream: keep its memory
    # from being reused while stream "1" may still be writing it.
    def side_sum(self, in3, in4):
        return in3 + in4

    def late_add(self, in3, in4):
        torch.ops.air.tagged_event_wait(_MM_DONE)
        return torch.add(in3, in4)

    def forward(self, in1, in2, in3, in4):
        add_result = self.add(in1, in2)
        with torchair.scope.npu_stream_switch("1", 0):
            _record_tagged_stream(in3, "1")
            _record_tagged_stream(in4, "1")
            mm_result = self.matmul(in3, in4)
            b = self.side_sum(in3, in4)
        mm1 = torch.mm(in3, in4)
        del b
        c = torch.ones(in3.shape[0], in4.shape[1], dtype=in3.dtype, device=in3.device)
        c.add_(2)
        with torchair.scope.npu_stream_switch("2", 0):
            _record_tagged_stream(in3, "2")
            _record_tagged_stream(in4, "2")
            add2 = self.late_add(in3, in4)
        return add_result, mm_result, mm1, add2, c


def example_inputs(size: int = 64) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return tuple(torch.randn(size, size, generator=generator) for _ in range(4))
