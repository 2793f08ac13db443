"""omni-infer's six-stream decode MoE by hand: each value that crosses streams waited for once, where it is read.

Streams: "topk_compute" (routing, unpacking, casts), "topk_comm" (both top-k
gathers in one block: the second needs nothing new), three "internode_comm_<r>"
(the token swaps, then the result swaps), "shared_expert" (issued after the
rounds, as the decorated model does for a small batch). One event per point:
``quant`` (the int8 tokens and scales, waited for by five streams), then one per
hop of the top-k and per swap; the main stream waits for each result right before
it reads it. The checker decides the ``record_stream`` calls: a tensor a side
stream reads while its maker allocates again before that read is known to be done.
When a caller makes ``x`` (``bench.sync_premise``), "topk_compute" keeps it too
(``quant`` already orders it there).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from bench.hand_written._experts import dense_experts
from corpus.omni_decode_six_streams.collectives import (all_gather_cross, all_gather_local, dynamic_quant,
                                                        reduce_scatter_local, swap)
from bench.sync_premise import from_caller
from npudsl import runtime

SOURCE = "corpus:omni_decode_six_streams"
USER_EVENTS = ()
COMM = ("internode_comm_0", "internode_comm_1", "internode_comm_2")


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _swaps(self, values: list[torch.Tensor], after: str, name: str, keep: tuple[bool, ...]) -> list[torch.Tensor]:
        """Round ``r`` of ``values`` swapped on its comm stream once ``after`` is recorded; records ``<name><r>``.
        ``keep[r]``: the main stream allocates before it waits for round ``r``, so its input is kept."""
        out = []
        for r, value in enumerate(values):
            with runtime.stream(COMM[r]):
                runtime.wait(after)
                if keep[r]:
                    runtime.record_stream(value, COMM[r])
                out.append(swap(value, r))
                runtime.record(f"{name}{r}")
        return out

    def _topk(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        """Routing on "topk_compute", both gathers on "topk_comm"; ``topk_all`` recorded."""
        m = self.m
        with runtime.stream("topk_compute"):
            runtime.wait("quant")
            runtime.record_stream((scale, x) if from_caller() else scale, "topk_compute")
            values, ids = m.gate(x).softmax(dim=-1).topk(m.top_k, dim=-1)
            topk_cat = torch.cat((values, ids.float(), scale.unsqueeze(-1)), dim=-1)
            runtime.record("cat")
        with runtime.stream("topk_comm"):
            runtime.wait("cat")
            topk_all = all_gather_cross(all_gather_local(topk_cat))
            runtime.record("topk_all")
        return topk_all

    def _rows(self, x_int8: torch.Tensor) -> list[torch.Tensor]:
        """The tokens of every rank, in four parts: gathered here, swapped on the comm streams."""
        input_ag = all_gather_local(x_int8)
        swapped = self._swaps([x_int8] * 3, "quant", "token_swap", (False,) * 3)
        gathered = []
        for r in range(3):
            runtime.wait(f"token_swap{r}")
            gathered.append(all_gather_local(swapped[r]))
        return [input_ag, *gathered]

    def _shared(self, x_int8: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        with runtime.stream("shared_expert"):
            runtime.wait("quant")
            runtime.record_stream((x_int8, scale), "shared_expert")
            gate, up = self.m.shared_gate_up(x_int8 * scale.unsqueeze(-1)).chunk(2, dim=-1)
            shared = self.m.shared_down(F.silu(gate) * up)
            runtime.record("shared_done")
        return shared

    def _unpack(self, topk_all: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        top_k = self.m.top_k
        with runtime.stream("topk_compute"):
            runtime.wait("topk_all")
            weights, ids, global_scale = topk_all.split([top_k, top_k, 1], dim=-1)
            ids = torch.round(ids).long()
            runtime.record("unpacked")
        return weights, ids, global_scale

    def _combine(self, final: torch.Tensor) -> torch.Tensor:
        """Reduce-scatter here, the result swaps on the comm streams, summed as each arrives."""
        input_self, round0, round1, round2 = final.split(final.shape[0] // 4)
        runtime.record("experts")
        with runtime.stream("topk_compute"):  # the model casts three parts there, against the fourth's scatter
            runtime.wait("experts")
            runtime.record_stream(final, "topk_compute")
            cast = [t.to(torch.bfloat16) for t in (input_self, round0, round1)]
            runtime.record("cast")
        round2 = reduce_scatter_local(round2.to(torch.bfloat16))
        runtime.wait("cast")
        parts = [*(reduce_scatter_local(t) for t in cast), round2]
        runtime.record("parts")
        out_swaps = self._swaps(parts[1:], "parts", "part_swap", (False, True, True))
        out = parts[0]
        for r in range(3):
            runtime.wait(f"part_swap{r}")
            out = out + out_swaps[r]
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        experts = self.m.experts
        x_int8, scale = dynamic_quant(x)
        runtime.record("quant")
        topk_all = self._topk(x, scale)
        rows = self._rows(x_int8)
        shared = self._shared(x_int8, scale)
        weights, ids, global_scale = self._unpack(topk_all)
        rows = torch.cat(rows)
        runtime.wait("unpacked")
        final = dense_experts(rows * global_scale, experts.w13, experts.w2, weights, ids)
        out = self._combine(final)
        runtime.wait("shared_done")
        return out.float() + shared
