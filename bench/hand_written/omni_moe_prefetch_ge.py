"""omni-infer's MoE decode by hand for GE: per layer three blocks on "stream_shared_expert", the user's two events.

GE orders data itself, so the shared expert's gate/up projection runs on the side
stream, as upstream's GE graph runs it: the expert-weight prefetch right after it
reads its result, which GE orders by that read (the stream-semantics version,
``omni_moe_prefetch.py``, keeps it on the main stream, where a side block would be
joined before any main-stream work). This is the schedule the generated GE code
runs; each call here is one a careful engineer writes with torchair's ops:

- three stream switches, one per phase of the shared expert;
- the user's ``dispatched``: one ``npu_wait_tensor`` first in the activation's
  block, on the dispatch's last output (its expert counts: the dispatch's last op,
  so the side stream waits for all of it, as upstream waits for ``expand_x`` of
  its one dispatch op);
- the user's ``gmm2_done``: one ``npu_wait_tensor`` on the second grouped matmul's
  output, first in the down projection's block.

No fork (the gate/up projection reads only the layer's input, ordered by data), no
join (the prefetches and the sum read the shared output: data), no
``record_stream`` (GE plans memory). :mod:`bench.sync_ge_proof` shows each needed.
"""

from __future__ import annotations

import torch
from torch import nn

from bench.hand_written.omni_moe_prefetch import ATTN_WEIGHTS, SIDE, USER_EVENTS
from corpus.omni_moe_prefetch.experts import combine, dispatch, grouped_matmul, prefetch, select_experts, swiglu

SOURCE = "corpus:omni_moe_prefetch"
__all__ = ["SOURCE", "USER_EVENTS", "Hand"]


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _moe(self, moe: nn.Module, hidden_states: torch.Tensor, next_weights: dict | None) -> torch.Tensor:
        import torchair  # the GE stand-in, installed while the bench captures this version

        router_logits = moe.gate(hidden_states.float())
        with torchair.scope.npu_stream_switch(SIDE):
            gate_up = moe.shared_experts.gate_up_proj(hidden_states)
        prefetch(moe.l2, moe.w13_weight, gate_up, moe.w13_prefetch_size)
        topk_weights, topk_ids = select_experts(router_logits, moe.top_k, moe.routed_scaling_factor)
        expand_x, expert_ids, expert_counts = dispatch(hidden_states, topk_ids, moe.experts)
        with torchair.scope.npu_stream_switch(SIDE):
            torchair.scope.npu_wait_tensor(gate_up, expert_counts)  # @after("dispatched")
            act = swiglu(gate_up)
        down_out = grouped_matmul(swiglu(grouped_matmul(expand_x, moe.w13_weight, expert_ids)), moe.w2_weight,
                                  expert_ids)
        with torchair.scope.npu_stream_switch(SIDE):
            torchair.scope.npu_wait_tensor(act, down_out)  # @after("gmm2_done")
            shared_output = moe.shared_experts.down_proj(act)
        if next_weights is not None:
            for name in ATTN_WEIGHTS:
                prefetch(moe.l2, next_weights[name], shared_output, moe.attn_prefetch_size)
        return combine(down_out, topk_weights) + shared_output

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        layers, residual = self.m.layers, None
        for i, layer in enumerate(layers):
            residual = hidden_states if residual is None else hidden_states + residual
            residual = layer.self_attn(layer.input_layernorm(residual)) + residual
            nxt = layers[i + 1].self_attn if i + 1 < len(layers) else None
            weights = None if nxt is None else dict(zip(ATTN_WEIGHTS, (nxt.q_a_proj.weight, nxt.q_b_proj.weight,
                                                                        nxt.W_UK)))
            hidden_states = self._moe(layer.mlp, layer.post_attention_layernorm(residual), weights)
        return self.m.norm(hidden_states + residual)
