"""The undecorated parts of vllm-ascend's Qwen3-MoE DBO model, shared by the decorated model and its twin.

Shaped after ``vllm_ascend/models/qwen3_dbo.py`` and ``vllm_ascend/multistream/``:
``AttnMetadata`` holds what the split needs of ``AscendMetadata`` (the slot mapping,
the query length of each request, whether the batch prefills);
``find_best_split_point`` (``ms_split.py``) picks the request boundary that
balances the tokens of the two micro-batches, and ``split_micro_batch`` cuts the
tokens and the metadata there, as ``MultiStreamPreTransformerLayer`` does with
``split_micro_batches_tensors``. Attention is a tiny single-head stand-in for
the layer's attention: it writes the micro-batch's keys and values into the KV
cache in place (``slot_mapping``), then attends causally within each request.
``TokenDispatcher`` stands for one micro-batch's ``MoEAlltoAllSeqOverlapDispatcher``:
Python state kept on the object between ``preprocess_and_permtute1`` (main
stream), the all-to-all and ``permute2`` (the communication stream), and the
combine, which drops it; the all-to-alls are CPU stand-ins that write a fresh output buffer in
place (one process: the tokens stay where they are).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["AttnMetadata", "Attention", "GroupedExperts", "RMSNorm", "TokenDispatcher", "find_best_split_point",
           "gating", "split_micro_batch"]


@dataclass
class AttnMetadata:
    slot_mapping: torch.Tensor
    query_lens: tuple[int, ...]
    is_prefill: bool


def find_best_split_point(query_lens: tuple[int, ...], min_total_tokens_to_split: int) -> int:
    """The number of requests in the first micro-batch, or -1 when the batch is too small to split."""
    total = sum(query_lens)
    if len(query_lens) < 2 or total < min_total_tokens_to_split:
        return -1
    gaps = [abs(total - 2 * sum(query_lens[:n])) for n in range(1, len(query_lens))]
    return 1 + gaps.index(min(gaps))


def split_micro_batch(split_bs_point: int, tensors: list[torch.Tensor | None],
                      attn_metadata: AttnMetadata) -> tuple[list[AttnMetadata], list[list[torch.Tensor | None]]]:
    """Two micro-batches: each tensor cut at the first micro-batch's last token, and the metadata with it."""
    index = sum(attn_metadata.query_lens[:split_bs_point])
    halves = [[None, None] if t is None else [t[:index], t[index:]] for t in tensors]
    pre = AttnMetadata(attn_metadata.slot_mapping[:index], attn_metadata.query_lens[:split_bs_point], True)
    post = AttnMetadata(attn_metadata.slot_mapping[index:], attn_metadata.query_lens[split_bs_point:], True)
    return [pre, post], halves


class RMSNorm(nn.Module):
    """vLLM's ``RMSNorm(x, residual)``: adds the residual first when given; returns (normed, new residual)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        residual = x if residual is None else x + residual
        return F.rms_norm(residual, (residual.shape[-1],), self.weight, eps=1e-6), residual


def _causal_per_request(query_lens: tuple[int, ...]) -> torch.Tensor:
    blocks = [torch.ones(n, n, dtype=torch.bool).tril() for n in query_lens]
    return torch.block_diag(*blocks)


class Attention(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(hidden, 3 * hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor, kv_cache: torch.Tensor, attn_metadata: AttnMetadata) -> torch.Tensor:
        q, k, v = self.qkv_proj(x).chunk(3, dim=-1)
        kv_cache[0].index_copy_(0, attn_metadata.slot_mapping, k)
        kv_cache[1].index_copy_(0, attn_metadata.slot_mapping, v)
        keys, values = kv_cache[0][attn_metadata.slot_mapping], kv_cache[1][attn_metadata.slot_mapping]
        scores = (q @ keys.T * x.shape[-1] ** -0.5).masked_fill(~_causal_per_request(attn_metadata.query_lens),
                                                                float("-inf"))
        return self.o_proj(scores.softmax(dim=-1) @ values)


def gating(gate: nn.Linear, x: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Qwen3-MoE routing: softmax over the expert logits, top-k, weights renormalized (``norm_topk_prob``)."""
    weights, ids = gate(x).softmax(dim=-1, dtype=torch.float32).topk(top_k, dim=-1)
    return weights / weights.sum(dim=-1, keepdim=True), ids


def _all_to_all(output: torch.Tensor, tokens: torch.Tensor) -> None:
    """``dist.all_to_all_single(output, tokens)`` on one rank: the tokens land in ``output``, written in place."""
    output.copy_(tokens)


class TokenDispatcher:
    """One micro-batch's dispatcher: its state lives on the object from permute1 to the combine."""

    def __init__(self, num_experts: int, top_k: int) -> None:
        self.num_experts, self.top_k = num_experts, top_k

    def preprocess_and_permtute1(self, hidden_states: torch.Tensor, topk_weights: torch.Tensor,
                                 topk_ids: torch.Tensor) -> None:
        flat = topk_ids.reshape(-1)
        self.num_tokens = hidden_states.shape[0]
        self.topk_weights = topk_weights
        self.reversed_mapping = flat.argsort(stable=True)
        self.tokens_per_expert = F.one_hot(flat, self.num_experts).sum(dim=0)
        self.permuted_tokens = hidden_states.repeat_interleave(self.top_k, dim=0).index_select(
            0, self.reversed_mapping)

    def dispatch_alltoall(self) -> None:
        self.global_input_tokens = torch.empty_like(self.permuted_tokens)
        _all_to_all(self.global_input_tokens, self.permuted_tokens)

    def permute2(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.global_input_tokens, self.tokens_per_expert

    def combine_alltoall(self, expert_output: torch.Tensor) -> torch.Tensor:
        combined = torch.empty_like(expert_output)
        _all_to_all(combined, expert_output)
        return combined

    def unpermute(self, combined: torch.Tensor) -> torch.Tensor:
        weights = self.topk_weights.reshape(-1).index_select(0, self.reversed_mapping).to(combined.dtype)
        tokens = self.reversed_mapping // self.top_k
        out = combined.new_zeros(self.num_tokens, combined.shape[-1])
        out.index_add_(0, tokens, combined * weights.unsqueeze(-1))
        self._release()
        return out

    def _release(self) -> None:
        """Drop the micro-batch's state once combined: nothing outlives the step."""
        self.topk_weights = self.reversed_mapping = self.tokens_per_expert = None
        self.permuted_tokens = self.global_input_tokens = None


class GroupedExperts(nn.Module):
    """``self.mlp.experts``: the routed experts' weights, one dispatcher per micro-batch, the grouped matmuls."""

    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, micro_batches: int = 2) -> None:
        super().__init__()
        self.w13_weight = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2_weight = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)
        self.token_dispatchers = [TokenDispatcher(experts, top_k) for _ in range(micro_batches)]

    def grouped_mlp(self, tokens: torch.Tensor, tokens_per_expert: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(tokens.shape[0]).unsqueeze(1)
        ids = (tokens_per_expert.cumsum(dim=0).unsqueeze(0) <= rows).sum(dim=1)  # each row's expert, static shape
        gate, up = torch.bmm(tokens.unsqueeze(1), self.w13_weight[ids]).squeeze(1).chunk(2, dim=-1)
        return torch.bmm((F.silu(gate) * up).unsqueeze(1), self.w2_weight[ids]).squeeze(1)
