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

_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for


class Model(nn.Module):
    def add(self, in1, in2):
        out = torch.add(in1, in2)
        _EVENT_TOKENS["seed000.Model.add_done"] = out
        return out

    def matmul(self, in3, in4):
        if "seed000.Model.add_done" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("seed000.Model.add_done")])
        out = torch.mm(in3, in4)
        _EVENT_TOKENS["seed000.Model.mm_done"] = out
        return out

    # B is made on stream "1" and dropped on the main stream: keep its memory
    # from being reused while stream "1" may still be writing it.
    def side_sum(self, in3, in4):
        return in3 + in4

    def late_add(self, in3, in4):
        if "seed000.Model.mm_done" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("seed000.Model.mm_done")])
        return torch.add(in3, in4)

    def forward(self, in1, in2, in3, in4):
        add_result = self.add(in1, in2)
        with torchair.scope.npu_stream_switch("1", 0):
            mm_result = self.matmul(in3, in4)
            b = self.side_sum(in3, in4)
        mm1 = torch.mm(in3, in4)
        del b
        c = torch.ones(in3.shape[0], in4.shape[1], dtype=in3.dtype, device=in3.device)
        c.add_(2)
        with torchair.scope.npu_stream_switch("2", 0):
            add2 = self.late_add(in3, in4)
        return add_result, mm_result, mm1, add2, c


def example_inputs(size: int = 64) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return tuple(torch.randn(size, size, generator=generator) for _ in range(4))
