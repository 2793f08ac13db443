"""The three inter-node exchange rounds, each on its own communication stream.

Shaped after the ``get_round_cross_group_from_list(round=i).swap(...)`` calls of
``DeepseekMoE.forward_decode`` (omni-infer ``omni/models/deepseek/deepseek_v3_a2.py``),
which run under ``npu_stream_switch(STREAM_INTERNODE_COMM_i)``: the same three
functions carry the tokens out before the experts and the results back after them.

Idioms: six_streams (three of the six), module_constants (stream tags).
"""

from __future__ import annotations

import torch

from npudsl import keep_output, on_stream

from .collectives import swap

STREAM_INTERNODE_COMM_0 = "internode_comm_0"
STREAM_INTERNODE_COMM_1 = "internode_comm_1"
STREAM_INTERNODE_COMM_2 = "internode_comm_2"


@on_stream(STREAM_INTERNODE_COMM_0, when="enabled")
@keep_output
def swap_round0(x: torch.Tensor, enabled: bool = True) -> torch.Tensor:
    return swap(x, 0)


@on_stream(STREAM_INTERNODE_COMM_1, when="enabled")
@keep_output
def swap_round1(x: torch.Tensor, enabled: bool = True) -> torch.Tensor:
    return swap(x, 1)


@on_stream(STREAM_INTERNODE_COMM_2, when="enabled")
@keep_output
def swap_round2(x: torch.Tensor, enabled: bool = True) -> torch.Tensor:
    return swap(x, 2)
