"""DeepSeek-R1's MoE in prefill (expert parallel, "double routing"), cut into the steps the micro-batch loop calls.

Shaped after ``DeepseekV3MoE`` in cann-recipes-infer
``models/deepseek_r1/models/modeling_deepseek.py``: ``forward_gate_init_routing``
(the gate, then ``npu_moe_init_routing_v2``), ``dispatch_double_routing`` (the
per-expert counts, then the tokens and their scales all-to-all into buffers it
allocates), ``forward_shared_expert``, ``forward_expert`` (re-routing, the grouped
matmuls, the rows put back in order), ``forward_combine_double_routing`` (the
experts' rows all-to-all back into a new buffer) and ``forward_finalize_routing``.
``moe_infer_double_routing`` runs them in a row, as a batch that is not split does
(upstream's chunking of long batches is left out). No streams here: the decoder
layer's delegating methods put the two all-to-alls on "stream1" (``model.py``).
"""

from __future__ import annotations

import torch
from torch import nn

from .layers import MLP, Experts, Gate, all_to_all_single, finalize_routing, init_routing

__all__ = ["DeepseekV3MoE"]

MOE_EP_SIZE = 1


class DeepseekV3MoE(nn.Module):
    def __init__(self, hidden: int, moe_inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.num_experts, self.moe_ep_size = experts, MOE_EP_SIZE
        self.gate = Gate(hidden, experts, top_k)
        self.experts = Experts(hidden, moe_inter, experts)
        self.shared_experts = MLP(hidden, moe_inter)

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        expanded_x, expanded_row_idx, tokens_per_expert, pertoken_scale, topk_weight = \
            self.forward_gate_init_routing(hidden_states)
        hidden_states_share = self.forward_shared_expert(hidden_states, is_prefill)
        return self.moe_infer_double_routing(hidden_states, expanded_x, expanded_row_idx, tokens_per_expert,
                                             pertoken_scale, topk_weight, hidden_states_share)

    def forward_gate_init_routing(self, hidden_states: torch.Tensor):
        topk_idx, topk_weight = self.gate(hidden_states)
        expanded_x, expanded_row_idx, tokens_per_expert, pertoken_scale = init_routing(
            hidden_states.view(-1, hidden_states.shape[-1]), topk_idx, self.num_experts)
        return expanded_x, expanded_row_idx, tokens_per_expert, pertoken_scale, topk_weight

    def dispatch_double_routing(self, tokens_per_expert: torch.Tensor, expanded_x: torch.Tensor,
                                pertoken_scale: torch.Tensor):
        tokens_per_expert_group = tokens_per_expert.new_empty(tokens_per_expert.shape[0])
        all_to_all_single(tokens_per_expert_group, tokens_per_expert)
        input_splits = output_splits = [expanded_x.shape[0]]
        gathered_tokens = expanded_x.new_empty(expanded_x.shape[0], expanded_x.shape[1])
        all_to_all_single(gathered_tokens, expanded_x, output_splits, input_splits)
        gathered_pertoken_scale = pertoken_scale.new_empty(gathered_tokens.shape[0])
        all_to_all_single(gathered_pertoken_scale, pertoken_scale, output_splits, input_splits)
        return tokens_per_expert_group, gathered_tokens, gathered_pertoken_scale, input_splits, output_splits

    def forward_shared_expert(self, hidden_states: torch.Tensor, is_prefill: bool) -> torch.Tensor:
        return self.shared_experts(hidden_states.view(-1, hidden_states.shape[-1]))

    def forward_expert(self, gathered_tokens: torch.Tensor, tokens_per_expert_group: torch.Tensor,
                       gathered_pertoken_scale: torch.Tensor) -> torch.Tensor:
        tokens_per_local_expert = tokens_per_expert_group.view(self.moe_ep_size, -1).sum(dim=0)
        gathered_ids_unsort = torch.arange(gathered_tokens.shape[0], dtype=torch.int32)
        hidden_states_ordered_by_experts = self.experts(gathered_tokens, tokens_per_local_expert,
                                                        gathered_pertoken_scale)
        return torch.index_select(hidden_states_ordered_by_experts, 0, gathered_ids_unsort.float().argsort().int())

    def forward_combine_double_routing(self, new_x: torch.Tensor, expanded_x: torch.Tensor, input_splits: list[int],
                                       output_splits: list[int]) -> torch.Tensor:
        gathered_tokens = new_x.new_empty(*expanded_x.shape)
        all_to_all_single(gathered_tokens, new_x, input_splits, output_splits)
        return gathered_tokens

    def forward_finalize_routing(self, hidden_states: torch.Tensor, gathered_tokens: torch.Tensor,
                                 hidden_states_share: torch.Tensor, topk_weight: torch.Tensor,
                                 expanded_row_idx: torch.Tensor) -> torch.Tensor:
        return finalize_routing(gathered_tokens, hidden_states_share, topk_weight, expanded_row_idx)

    def moe_infer_double_routing(self, x: torch.Tensor, expanded_x: torch.Tensor, expanded_row_idx: torch.Tensor,
                                 tokens_per_expert: torch.Tensor, pertoken_scale: torch.Tensor,
                                 topk_weight: torch.Tensor, hidden_states_share: torch.Tensor) -> torch.Tensor:
        tokens_per_expert_group, gathered_tokens, gathered_pertoken_scale, input_splits, output_splits = \
            self.dispatch_double_routing(tokens_per_expert, expanded_x, pertoken_scale)
        new_x = self.forward_expert(gathered_tokens, tokens_per_expert_group, gathered_pertoken_scale)
        gathered_tokens = self.forward_combine_double_routing(new_x, expanded_x, input_splits, output_splits)
        return self.forward_finalize_routing(x, gathered_tokens, hidden_states_share, topk_weight, expanded_row_idx)
