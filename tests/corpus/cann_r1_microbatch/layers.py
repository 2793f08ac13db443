"""The undecorated parts of DeepSeek-R1 prefill, shared by the decorated model and its twin.

Shaped after cann-recipes-infer ``models/deepseek_r1/models/modeling_deepseek.py``:
``DeepseekV3RMSNorm`` called with the residual (adds it first, returns both), a tiny
single-head stand-in for ``DeepseekV3Attention`` (RoPE on query and key, this batch's
keys and values written into the KV cache in place at ``slot_mapping``, as the paged
attention does, then causal attention over what it wrote, each request apart), the dense MLP and the
shared expert (gate/up, SiLU-and-mul, down), the gate (softmax top-k, renormalized),
and CPU stand-ins for the routing kernels with their data flow:
``npu_moe_init_routing_v2`` (rows sorted by expert, the per-expert counts, dynamic
int8 quantization with its per-token scale), the grouped matmul of ``FusedMoEGMM``
(dequantized by the per-token scale, each row's expert read from the counts) and
``npu_moe_finalize_routing`` (the weighted sum of each token's expert rows plus the
shared output). With one expert-parallel rank, ``dist.all_to_all_single`` copies its
input into the output buffer it is given (``all_to_all_single``); the splits upstream
reads back to the host are the rows of that one rank.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["MLP", "Attention", "Experts", "Gate", "RMSNorm", "all_to_all_single", "finalize_routing",
           "init_routing", "rotary"]


class RMSNorm(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        residual = x if residual is None else x + residual
        return F.rms_norm(residual, (residual.shape[-1],), self.weight, eps=1e-6), residual


def rotary(position_ids: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``cos_sin`` of ``prepare_inputs_for_layer``: per position, for a head of ``dim``."""
    inv_freq = 1.0 / 10000 ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    angles = position_ids.to(torch.float32).unsqueeze(-1) * inv_freq
    emb = torch.cat((angles, angles), dim=-1)
    return emb.cos(), emb.sin()


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Attention(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(hidden, 3 * hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor, cos_sin: tuple[torch.Tensor, torch.Tensor], kv_cache: torch.Tensor,
                slot_mapping: torch.Tensor, seq_lens: tuple[int, ...]) -> torch.Tensor:
        cos, sin = cos_sin
        q, k, v = self.qkv_proj(x).chunk(3, dim=-1)
        kv_cache[0].index_copy_(0, slot_mapping, _rope(k, cos, sin))
        kv_cache[1].index_copy_(0, slot_mapping, v)
        keys, values = kv_cache[0][slot_mapping], kv_cache[1][slot_mapping]
        request = torch.tensor([i for i, n in enumerate(seq_lens) for _ in range(n)])
        causal = torch.ones(x.shape[0], x.shape[0], dtype=torch.bool).tril() & (request[:, None] == request[None, :])
        scores = (_rope(q, cos, sin) @ keys.T * x.shape[-1] ** -0.5).masked_fill(~causal, float("-inf"))
        return self.o_proj(scores.softmax(dim=-1) @ values)


class MLP(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class Gate(nn.Module):
    def __init__(self, hidden: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.weight = nn.Parameter(torch.randn(experts, hidden) * hidden**-0.5)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = F.linear(x, self.weight).softmax(dim=-1)
        weight, idx = scores.topk(self.top_k, dim=-1)
        return idx.to(torch.int32), weight / weight.sum(dim=-1, keepdim=True)


def init_routing(x: torch.Tensor, topk_idx: torch.Tensor,
                 num_experts: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(expanded_x quantized, expanded_row_idx, tokens_per_expert, pertoken_scale)."""
    flat = topk_idx.reshape(-1).long()
    order = flat.argsort(stable=True)
    expanded = x[order // topk_idx.shape[1]]
    tokens_per_expert = F.one_hot(flat, num_experts).sum(dim=0)
    scale = expanded.abs().amax(dim=-1).clamp_min(1e-6) / 127
    return torch.round(expanded / scale.unsqueeze(-1)), order.argsort().to(torch.int32), tokens_per_expert, scale


def all_to_all_single(output: torch.Tensor, input: torch.Tensor, output_splits: list[int] | None = None,
                      input_splits: list[int] | None = None) -> None:
    """``dist.all_to_all_single`` with one rank: the input lands in the output buffer, in place."""
    output.copy_(input)


class Experts(nn.Module):
    """``FusedMoEGMM``: the rows come sorted by expert; ``expert_tokens`` counts them per expert."""

    def __init__(self, hidden: int, inter: int, experts: int) -> None:
        super().__init__()
        self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
        self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, x: torch.Tensor, expert_tokens: torch.Tensor, pertoken_scale: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(x.shape[0]).unsqueeze(1)
        ids = (rows >= expert_tokens.cumsum(dim=0).unsqueeze(0)).sum(dim=1)
        x = (x * pertoken_scale.unsqueeze(-1)).unsqueeze(1)
        gate, up = torch.bmm(x, self.w13[ids]).squeeze(1).chunk(2, dim=-1)
        return torch.bmm((F.silu(gate) * up).unsqueeze(1), self.w2[ids]).squeeze(1)


def finalize_routing(gathered_tokens: torch.Tensor, skip1: torch.Tensor, scales: torch.Tensor,
                     expanded_src_to_dst_row: torch.Tensor) -> torch.Tensor:
    rows = gathered_tokens[expanded_src_to_dst_row.long()].view(*scales.shape, -1)
    return skip1 + (rows * scales.unsqueeze(-1)).sum(dim=1)
