"""MLA prefill with the latent-cache all-gather and the KV cache write on two side streams, ordered by hand.

Shaped after ``AscendDeepseekAttention_MLA.forward_prefill_pd_seperate`` (omni-infer
``omni/models/deepseek/deepseek_v3_a2.py``): ``kv_stream2`` all-gathers the latent
cache while the main stream projects and gathers the query; ``kv_stream`` waits for
``kv_stream2`` (side stream to side stream), normalizes, applies RoPE and writes the
paged cache; the attention on the main stream waits for ``kv_stream``. Every wait is
written by hand (``sync="manual"``).

Idioms: manual_pipeline (``@after``/``@records`` events), container_returns (a list of
per-rank chunks; a tuple holding an ``int``), side_to_side, non_tensor_args (a dict of
tensors, a tuple cache).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import after, keep_output, on_stream, records

from .collectives import all_gather_world, dequant, dynamic_quant, reduce_scatter_world, rotate

STREAM_KV = "kv_stream"
STREAM_KV2 = "kv_stream2"


class PrefillMLA(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, kv_lora_rank: int, heads: int, nope_dim: int, rope_dim: int,
                 v_dim: int, multistream: bool = True) -> None:
        super().__init__()
        self.multi_stream = multistream
        self.heads, self.nope_dim, self.rope_dim, self.v_dim = heads, nope_dim, rope_dim, v_dim
        self.kv_lora_rank = kv_lora_rank
        self.kv_a_proj_with_mqa = nn.Linear(hidden, kv_lora_rank + rope_dim, bias=False)
        self.kv_a_layernorm = nn.Parameter(1 + 0.1 * torch.randn(kv_lora_rank))
        self.q_a_proj = nn.Linear(hidden, q_lora_rank, bias=False)
        self.q_a_layernorm = nn.Parameter(1 + 0.1 * torch.randn(q_lora_rank))
        self.q_b_proj = nn.Linear(q_lora_rank, heads * (nope_dim + rope_dim), bias=False)
        self.kv_b_proj = nn.Linear(kv_lora_rank, heads * (nope_dim + v_dim), bias=False)
        self.o_proj = nn.Linear(heads * v_dim, hidden, bias=False)

    @records("latent_ready")
    def latent(self, hidden_states: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.kv_a_proj_with_mqa(dequant(hidden_states))

    @on_stream(STREAM_KV2, sync="manual", when="self.multi_stream")
    @after("latent_ready")
    @records("latent_gathered")
    @keep_output
    def gather_latent(self, latent_cache: torch.Tensor) -> list[torch.Tensor]:
        return list(all_gather_world(latent_cache).split(latent_cache.shape[0]))

    @on_stream(STREAM_KV, sync="manual", when="self.multi_stream")
    @after("latent_gathered")
    @records("kv_done")
    @keep_output
    def kv_rmsnorm_rope_cache(self, latent_chunks: list[torch.Tensor], cos: torch.Tensor, sin: torch.Tensor,
                              kv_cache: tuple[torch.Tensor, torch.Tensor],
                              slot_mapping: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
        latent_cache = torch.cat(latent_chunks)
        kv_a, k_pe = latent_cache.split([self.kv_lora_rank, self.rope_dim], dim=-1)
        kv_a = F.rms_norm(kv_a, (self.kv_lora_rank,), self.kv_a_layernorm, eps=1e-6)
        k_pe = rotate(k_pe, cos, sin)
        kv_cache[0].index_copy_(0, slot_mapping, kv_a)
        kv_cache[1].index_copy_(0, slot_mapping, k_pe)
        return k_pe, kv_a, latent_cache.shape[0]

    def query(self, hidden_states: dict[str, torch.Tensor], cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        q = F.rms_norm(self.q_a_proj(dequant(hidden_states)), (self.q_a_proj.out_features,), self.q_a_layernorm)
        q = dequant({name: all_gather_world(t) for name, t in dynamic_quant(q).items()})
        q_nope, q_pe = self.q_b_proj(q).view(-1, self.heads, self.nope_dim + self.rope_dim).split(
            [self.nope_dim, self.rope_dim], dim=-1)
        return torch.cat([q_nope, rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1))], dim=-1)

    @after("kv_done")
    def attend(self, q: torch.Tensor, k_pe: torch.Tensor, kv_a: torch.Tensor, tokens: int) -> torch.Tensor:
        k_nope, v = self.kv_b_proj(kv_a).view(tokens, self.heads, -1).split([self.nope_dim, self.v_dim], dim=-1)
        k = torch.cat([k_nope, k_pe.unsqueeze(1).expand(-1, self.heads, -1)], dim=-1)
        probs = (torch.einsum("qnd,knd->nqk", q, k) * q.shape[-1] ** -0.5).softmax(dim=-1)
        out = torch.einsum("nqk,knd->qnd", probs, v).reshape(tokens, -1)
        return reduce_scatter_world(self.o_proj(out))

    def forward(self, hidden_states: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                kv_cache: tuple[torch.Tensor, torch.Tensor], slot_mapping: torch.Tensor) -> torch.Tensor:
        h_quant = dynamic_quant(hidden_states)
        latent_chunks = self.gather_latent(self.latent(h_quant))
        q = self.query(h_quant, cos, sin)
        k_pe, kv_a, tokens = self.kv_rmsnorm_rope_cache(latent_chunks, cos, sin, kv_cache, slot_mapping)
        return self.attend(q, k_pe, kv_a, tokens)
