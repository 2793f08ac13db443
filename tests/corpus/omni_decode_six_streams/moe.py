"""omni-infer's DeepSeek-V3 MoE decode: gating, shared expert and collectives spread over six streams.

Shaped after ``DeepseekMoE.forward_decode`` (omni-infer ``omni/models/deepseek/deepseek_v3_a2.py``):
the top-k is computed on ``STREAM_TOPK_COMPUTE`` and gathered on ``STREAM_TOPK_COMM``; the
int8 tokens are all-gathered inside the node on the main stream while the three
inter-node rounds run on their own streams (``comm.py``); the shared expert runs on
``STREAM_SHARED_EXPERT``, before the communication for large batches and after it
for small ones; after the experts, the results go back through the same rounds,
pipelined against the main stream's reduce-scatters. Communication is pipelined
against communication; the collectives are CPU stand-ins (``collectives.py``).

Idioms: six_streams, module_constants, container_returns (``@keep_output`` on a
``topk`` namedtuple and on tuples; a namedtuple passed on to another stream),
if_call (the shared expert under ``if large_batch:`` / ``if small_batch:``),
side_to_side (top-k made on the compute stream, gathered on the comm stream).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream

from . import comm
from .collectives import all_gather_cross, all_gather_local, dynamic_quant, reduce_scatter_local

STREAM_TOPK_COMPUTE = "topk_compute"
STREAM_SHARED_EXPERT = "shared_expert"
STREAM_TOPK_COMM = "topk_comm"


class Experts(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int) -> None:
        super().__init__()
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, x: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor) -> torch.Tensor:
        mask = x.new_zeros(x.shape[0], self.w13.shape[0]).scatter(-1, topk_ids, topk_weights)
        gate, up = torch.einsum("th,ehi->eti", x, self.w13).chunk(2, dim=-1)
        return torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask)


class DeepseekMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, large_batch: int,
                 multistream: bool = True) -> None:
        super().__init__()
        self.multistream, self.top_k, self.large_batch = multistream, top_k, large_batch
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.shared_gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.shared_down = nn.Linear(inter, hidden, bias=False)
        self.experts = Experts(hidden, inter, experts)

    @on_stream(STREAM_TOPK_COMPUTE, when="self.multistream")
    @keep_output
    def gate_topk(self, hidden_states: torch.Tensor) -> torch.return_types.topk:
        return self.gate(hidden_states).softmax(dim=-1).topk(self.top_k, dim=-1)

    @on_stream(STREAM_TOPK_COMPUTE, when="self.multistream")
    @keep_output
    def pack_topk(self, topk: torch.return_types.topk, pertoken_scale: torch.Tensor) -> torch.Tensor:
        return torch.cat((topk.values, topk.indices.float(), pertoken_scale.unsqueeze(-1)), dim=-1)

    @on_stream(STREAM_TOPK_COMPUTE, when="self.multistream")
    @keep_output
    def unpack_topk(self, topk_all: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        weights, ids, scale = topk_all.split([self.top_k, self.top_k, 1], dim=-1)
        return weights, torch.round(ids).long(), scale.squeeze(-1)

    @on_stream(STREAM_TOPK_COMPUTE, when="self.multistream")
    @keep_output
    def cast_rounds(self, *rounds: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(r.to(torch.bfloat16) for r in rounds)

    @on_stream(STREAM_TOPK_COMM, when="self.multistream")
    @keep_output
    def gather_topk_local(self, topk_cat: torch.Tensor) -> torch.Tensor:
        return all_gather_local(topk_cat)

    @on_stream(STREAM_TOPK_COMM, when="self.multistream")
    @keep_output
    def gather_topk_cross(self, topk_local_all: torch.Tensor) -> torch.Tensor:
        return all_gather_cross(topk_local_all)

    @on_stream(STREAM_SHARED_EXPERT, when="self.multistream")
    @keep_output
    def shared_experts(self, hidden_states_int8: torch.Tensor, pertoken_scale: torch.Tensor) -> torch.Tensor:
        gate, up = self.shared_gate_up(hidden_states_int8 * pertoken_scale.unsqueeze(-1)).chunk(2, dim=-1)
        return self.shared_down(F.silu(gate) * up)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        large_batch = hidden_states.shape[0] >= self.large_batch
        on = self.multistream
        hidden_states_int8, pertoken_scale = dynamic_quant(hidden_states)
        topk = self.gate_topk(hidden_states)
        topk_cat = self.pack_topk(topk, pertoken_scale)
        if large_batch:
            shared_output = self.shared_experts(hidden_states_int8, pertoken_scale)
        topk_local_all = self.gather_topk_local(topk_cat)
        input_ag = all_gather_local(hidden_states_int8)
        round0_swp = comm.swap_round0(hidden_states_int8, on)
        round1_swp = comm.swap_round1(hidden_states_int8, on)
        round2_swp = comm.swap_round2(hidden_states_int8, on)
        topk_all = self.gather_topk_cross(topk_local_all)
        round0_ag = all_gather_local(round0_swp)
        round1_ag = all_gather_local(round1_swp)
        round2_ag = all_gather_local(round2_swp)
        if not large_batch:
            shared_output = self.shared_experts(hidden_states_int8, pertoken_scale)
        topk_weights, topk_ids, global_pertoken_scale = self.unpack_topk(topk_all)
        global_hidden_states = torch.cat([input_ag, round0_ag, round1_ag, round2_ag])
        final = self.experts(global_hidden_states * global_pertoken_scale.unsqueeze(-1), topk_weights, topk_ids)
        input_self, round0, round1, round2 = final.split(final.shape[0] // 4)
        round2 = round2.to(torch.bfloat16)
        round1, round0, input_self = self.cast_rounds(round1, round0, input_self)
        round2_rs = reduce_scatter_local(round2)
        round1_rs = reduce_scatter_local(round1)
        round0_rs = reduce_scatter_local(round0)
        input_rs = reduce_scatter_local(input_self)
        round2_swp = comm.swap_round2(round2_rs, on)
        round1_swp = comm.swap_round1(round1_rs, on)
        round0_swp = comm.swap_round0(round0_rs, on)
        return (input_rs + round0_swp + round1_swp + round2_swp).float() + shared_output
