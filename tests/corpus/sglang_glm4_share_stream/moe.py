"""GLM-4's sparse MoE block: the shared expert on "share_stream" (``npu_utils.py``), the routed path on main.

Shaped after ``Glm4MoeSparseMoeBlock.forward_deepep`` in sglang
``python/sglang/srt/models/glm4_moe.py``: the gate projects the tokens to fp32
expert logits on the main stream; then, when the batch extends (or verifies) and
``SGLANG_NPU_USE_MULTI_STREAM`` is set (``dual_stream``), ``process_shared_expert``
(the decorated helper of ``npu_utils.py``) runs the shared expert on "share_stream"
at 8/16 cores, else on the main stream; the grouped top-k and the routed experts (dispatch,
grouped matmuls, combine) run on the main stream meanwhile; upstream's
``wait_share_stream()`` is the join before the shared output is updated in place
with the routed output scaled by ``routed_scaling_factor``; that tensor, made on
the share stream, is the block's output.

Idioms: param_when (the flag passed per call to the helper's ``dual_stream``),
non_tensor_args (``is_extend: bool``; the shared expert passed to the helper as a
bound method), inplace_side_output (the shared output updated in
place on the main stream after the join, then returned).
"""

from __future__ import annotations

import torch
from torch import nn

from .layers import MLP, Gate, RoutedExperts, grouped_topk
from .npu_utils import process_shared_expert


class Glm4MoeSparseMoeBlock(nn.Module):
    def __init__(self, hidden: int, moe_inter: int, shared_experts: int, experts: int, top_k: int, n_group: int,
                 topk_group: int, routed_scaling_factor: float, multistream: bool = True) -> None:
        super().__init__()
        self.use_multi_stream = multistream
        self.top_k, self.n_group, self.topk_group = top_k, n_group, topk_group
        self.routed_scaling_factor = routed_scaling_factor
        self.gate = Gate(hidden, experts)
        self.experts = RoutedExperts(hidden, moe_inter, experts)
        self.shared_experts = MLP(hidden, moe_inter * shared_experts)

    def _forward_shared_experts(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.shared_experts(hidden_states)

    def forward(self, hidden_states: torch.Tensor, is_extend: bool) -> torch.Tensor:
        dual_stream = self.use_multi_stream and is_extend
        router_logits = self.gate(hidden_states)
        shared_output = process_shared_expert(hidden_states, self._forward_shared_experts, dual_stream)
        topk_weights, topk_ids = grouped_topk(router_logits, self.gate.e_score_correction_bias, self.top_k,
                                              self.n_group, self.topk_group)
        final_hidden_states = self.experts(hidden_states, topk_weights, topk_ids)
        shared_output.add_(final_hidden_states, alpha=self.routed_scaling_factor)
        return shared_output
