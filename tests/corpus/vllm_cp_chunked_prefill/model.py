"""Decoder layers around the context-parallel attention: QKV projection, the KV cache written, attention, o_proj.

Shaped after the attention layer that calls ``AscendAttentionCPImpl.forward_impl``
in vllm-ascend (``vllm_ascend/attention/context_parallel/attention_cp.py``,
``vllm_ascend/attention/attention_v1.py``): this rank's keys and values are written
into the layer's paged cache (``reshape_and_cache`` at ``slot_mapping``), the
keys and values of the whole sequence are gathered over the PCP group, and the
implementation writes the attention into an ``output`` buffer the layer
allocates. The MLP is left out: nothing in it touches the streams.

Idioms: non_tensor_args (the metadata object and a per-layer cache tuple).
"""

from __future__ import annotations

import torch
from torch import nn

from .attention_cp import AscendAttentionCPImpl
from .layers import AttentionMetadata, all_gather


class CPAttentionLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, kv_heads: int, head_size: int, pcp_size: int, pcp_rank: int,
                 dcp_size: int, dcp_rank: int, multistream: bool) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_size, self.pcp_size = heads, kv_heads, head_size, pcp_size
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.qkv_proj = nn.Linear(hidden, (heads + 2 * kv_heads) * head_size, bias=False)
        self.o_proj = nn.Linear(heads * head_size, hidden, bias=False)
        self.impl = AscendAttentionCPImpl(heads, kv_heads, head_size, pcp_size, pcp_rank, dcp_size, dcp_rank,
                                          multistream)

    def forward(self, hidden_states: torch.Tensor, kv_cache: torch.Tensor,
                attn_metadata: AttentionMetadata) -> torch.Tensor:
        sizes = [self.heads * self.head_size, self.kv_heads * self.head_size, self.kv_heads * self.head_size]
        q, k, v = self.qkv_proj(self.input_layernorm(hidden_states)).split(sizes, dim=-1)
        query = q.reshape(-1, self.heads, self.head_size)
        key = k.reshape(-1, self.kv_heads, self.head_size)
        value = v.reshape(-1, self.kv_heads, self.head_size)
        kv_cache[0].index_copy_(0, attn_metadata.slot_mapping, key)
        kv_cache[1].index_copy_(0, attn_metadata.slot_mapping, value)
        key, value = all_gather(key, 0, self.pcp_size), all_gather(value, 0, self.pcp_size)
        output = torch.empty_like(query)
        output = self.impl.forward_impl(query, key, value, (kv_cache[0], kv_cache[1]), attn_metadata, output)
        return hidden_states + self.o_proj(output.reshape(-1, self.heads * self.head_size))


class CPModel(nn.Module):
    def __init__(self, hidden: int, heads: int, kv_heads: int, head_size: int, pcp_size: int, pcp_rank: int,
                 dcp_size: int, dcp_rank: int, layers: int, multistream: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            CPAttentionLayer(hidden, heads, kv_heads, head_size, pcp_size, pcp_rank, dcp_size, dcp_rank, multistream)
            for _ in range(layers)
        )
        self.norm = nn.RMSNorm(hidden, eps=1e-6)

    def forward(self, hidden_states: torch.Tensor, kv_caches: torch.Tensor,
                attn_metadata: AttentionMetadata) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            hidden_states = layer(hidden_states, kv_caches[i], attn_metadata)
        return self.norm(hidden_states)
