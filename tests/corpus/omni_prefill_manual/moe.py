"""MoE prefill with the token all-gather on a side stream, overlapping the shared expert and the gating.

Shaped after ``DeepseekMoE.forward_prefill_pd_seperate`` (omni-infer
``omni/models/deepseek/deepseek_v3_a2.py``), where a side stream all-gathers the
int8 tokens while the main stream runs the shared expert, the router and the top-k
all-gather, and the streams then wait for each other before the chunked grouped
matmul. Here the waits are ``@after``/``@records`` events (``sync="manual"``).

Idioms: manual_pipeline, container_returns (a dict in, a dict out), non_tensor_args
(``chunk_size: int``).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import after, keep_output, on_stream, records

from .collectives import all_gather_world, dequant, dynamic_quant, reduce_scatter_world

STREAM_PREFILL_GATHER = "prefill_gather"


class PrefillMoE(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, multistream: bool = True) -> None:
        super().__init__()
        self.multi_stream, self.top_k = multistream, top_k
        self.gate = nn.Linear(hidden, experts, bias=False)
        self.shared_gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.shared_down = nn.Linear(inter, hidden, bias=False)
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    @records("quant_done")
    def quantize(self, hidden_states: torch.Tensor) -> dict[str, torch.Tensor]:
        return dynamic_quant(hidden_states)

    @on_stream(STREAM_PREFILL_GATHER, sync="manual", when="self.multi_stream")
    @after("quant_done")
    @records("tokens_gathered")
    @keep_output
    def gather_tokens(self, quant: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {name: all_gather_world(t) for name, t in quant.items()}

    def shared_experts(self, quant: dict[str, torch.Tensor]) -> torch.Tensor:
        gate, up = self.shared_gate_up(dequant(quant)).chunk(2, dim=-1)
        return self.shared_down(F.silu(gate) * up)

    @after("tokens_gathered")
    def chunked_gmm(self, gathered: dict[str, torch.Tensor], topk_all: torch.Tensor, chunk_size: int) -> torch.Tensor:
        weights, ids = topk_all.split(self.top_k, dim=-1)
        mask = topk_all.new_zeros(topk_all.shape[0], self.w13.shape[0]).scatter(-1, ids.long(), weights)
        outputs = []
        for start in range(0, mask.shape[0], chunk_size):
            rows = dequant({name: t[start : start + chunk_size] for name, t in gathered.items()})
            gate, up = torch.einsum("th,ehi->eti", rows, self.w13).chunk(2, dim=-1)
            outputs.append(torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask[start : start + chunk_size]))
        return torch.cat(outputs)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        quant = self.quantize(hidden_states)
        gathered = self.gather_tokens(quant)
        shared_output = self.shared_experts(quant)
        weights, ids = self.gate(hidden_states).softmax(dim=-1).topk(self.top_k, dim=-1)
        topk_all = all_gather_world(torch.cat([weights, ids.float()], dim=-1))
        final = self.chunked_gmm(gathered, topk_all, chunk_size=3)
        return reduce_scatter_world(final) + shared_output
