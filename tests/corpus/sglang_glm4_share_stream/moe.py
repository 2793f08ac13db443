"""GLM-4's sparse MoE block: the shared expert on "share_stream" at 8 cube / 16 vector cores, the routed path on main.

Shaped after ``Glm4MoeSparseMoeBlock.forward_deepep`` in sglang
``python/sglang/srt/models/glm4_moe.py`` with the NPU helpers of
``python/sglang/srt/hardware_backend/npu/utils.py``: the gate projects the tokens to
fp32 expert logits on the main stream; then, when the batch extends (or verifies)
and ``SGLANG_NPU_USE_MULTI_STREAM`` is set, ``process_shared_expert`` makes
``share_stream`` wait for the main stream and runs the shared expert there, the
stream limited by ``set_stream_limit(share_stream, 8, 16)``; the grouped top-k and
the routed experts (dispatch, grouped matmuls, combine) run on the main stream
meanwhile; ``wait_share_stream()`` joins before the shared output is updated in
place with the routed output scaled by ``routed_scaling_factor``, and that tensor,
made on the share stream, is the block's output.

Idioms: param_when (upstream's per-batch flag as the decorated method's
``dual_stream`` parameter, for the stream and for its core limit; the main stream
keeps every core, unlike ``core_split``), module_constants (the stream tag and the
core counts), non_tensor_args (``is_extend: bool``), inplace_side_output (the
shared output, made on the side stream, updated in place on the main stream
after the join and returned).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import core_limit, on_stream

from .layers import MLP, Gate, RoutedExperts, grouped_topk

SHARE_STREAM = "share_stream"
CORE_NUM_FOR_SHARE = 8
VECTOR_CORE_NUM_FOR_SHARE = 16


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

    @on_stream(SHARE_STREAM, when="dual_stream")
    @core_limit(CORE_NUM_FOR_SHARE, VECTOR_CORE_NUM_FOR_SHARE, when="dual_stream")
    def _forward_shared_experts(self, hidden_states: torch.Tensor, dual_stream: bool = False) -> torch.Tensor:
        return self.shared_experts(hidden_states)

    def forward(self, hidden_states: torch.Tensor, is_extend: bool) -> torch.Tensor:
        dual_stream = self.use_multi_stream and is_extend
        router_logits = self.gate(hidden_states)
        shared_output = self._forward_shared_experts(hidden_states, dual_stream)
        topk_weights, topk_ids = grouped_topk(router_logits, self.gate.e_score_correction_bias, self.top_k,
                                              self.n_group, self.topk_group)
        final_hidden_states = self.experts(hidden_states, topk_weights, topk_ids)
        shared_output.add_(final_hidden_states, alpha=self.routed_scaling_factor)
        return shared_output
