"""DeepSeek-V3.2 decoder layers on Ascend: DSA attention (``mla_npu.py``, where the streams are), then an MLP.

Shaped after ``DeepseekV2AttentionMLA`` and ``DeepseekV2DecoderLayer`` in sglang
``python/sglang/srt/models/deepseek_v2.py`` with the NPU attention paths of
``python/sglang/srt/hardware_backend/npu/modules/deepseek_v2_attention_mla_npu.py``:
the attention owns the MLA projections, the fused preprocess (built once here, lazily
upstream), the DSA indexer, ``w_kc`` / ``w_vc`` and ``alt_stream`` (``use_alt_stream``);
its forward calls ``forward_dsa_prepare_npu`` and then ``forward_dsa_core_npu`` by bare
name, passing itself. The model wraps its KV caches in a ``ForwardBatch`` (decode or
prefill, the cache slots, the pool) and a ``BumpAllocator``, as the model runner does.

Idioms: non_tensor_args (``is_decode: bool``, the ``ForwardBatch`` and allocator
objects, the attention passing itself to module functions).
"""

from __future__ import annotations

import torch
from torch import nn

from .layers import MLP, BumpAllocator, ForwardBatch, Indexer, KVPool, ReplicatedLinear, RMSNorm, RotaryEmbedding
from .mla_npu import NPUFusedMLAPreprocess, forward_dsa_core_npu, forward_dsa_prepare_npu


class DeepseekV2AttentionMLA(nn.Module):
    def __init__(self, layer_id: int, hidden: int, heads: int, q_lora_rank: int, kv_lora_rank: int, qk_nope: int,
                 qk_rope: int, v_head: int, index_heads: int, index_head_dim: int, index_topk: int,
                 max_positions: int, use_alt_stream: bool) -> None:
        super().__init__()
        self.layer_id, self.num_local_heads, self.use_alt_stream = layer_id, heads, use_alt_stream
        self.q_lora_rank, self.kv_lora_rank, self.v_head_dim = q_lora_rank, kv_lora_rank, v_head
        self.qk_nope_head_dim, self.qk_rope_head_dim, self.qk_head_dim = qk_nope, qk_rope, qk_nope + qk_rope
        self.fused_qkv_a_proj_with_mqa = ReplicatedLinear(hidden, q_lora_rank + kv_lora_rank + qk_rope)
        self.q_a_layernorm = RMSNorm(q_lora_rank)
        self.kv_a_layernorm = RMSNorm(kv_lora_rank)
        self.q_b_proj = ReplicatedLinear(q_lora_rank, heads * self.qk_head_dim)
        self.w_kc = nn.Parameter(torch.randn(heads, qk_nope, kv_lora_rank) * qk_nope**-0.5)
        self.w_vc = nn.Parameter(torch.randn(heads, kv_lora_rank, v_head) * kv_lora_rank**-0.5)
        self.o_proj = ReplicatedLinear(heads * v_head, hidden)
        self.rotary_emb = RotaryEmbedding(qk_rope, max_positions)
        self.indexer = Indexer(hidden, q_lora_rank, index_heads, index_head_dim, qk_rope, index_topk, max_positions)
        self.mla_preprocess = NPUFusedMLAPreprocess(self, use_alt_stream)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, forward_batch: ForwardBatch,
                zero_allocator: BumpAllocator) -> torch.Tensor:
        inner_state = forward_dsa_prepare_npu(self, positions, hidden_states, forward_batch, zero_allocator)
        return forward_dsa_core_npu(self, *inner_state)


class DeepseekV2DecoderLayer(nn.Module):
    def __init__(self, layer_id: int, hidden: int, inter: int, use_alt_stream: bool, **attn: int) -> None:
        super().__init__()
        self.self_attn = DeepseekV2AttentionMLA(layer_id, hidden, use_alt_stream=use_alt_stream, **attn)
        self.input_layernorm = RMSNorm(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = MLP(hidden, inter)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, forward_batch: ForwardBatch,
                zero_allocator: BumpAllocator) -> torch.Tensor:
        hidden_states = hidden_states + self.self_attn(positions, self.input_layernorm(hidden_states), forward_batch,
                                                       zero_allocator)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class DeepseekV32Model(nn.Module):
    def __init__(self, hidden: int, inter: int, layers: int, multistream: bool = True, **attn: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DeepseekV2DecoderLayer(i, hidden, inter, multistream, **attn)
                                    for i in range(layers))
        self.norm = RMSNorm(hidden)

    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor, ckv_cache: torch.Tensor,
                k_rope_cache: torch.Tensor, index_k_cache: torch.Tensor, out_cache_loc: torch.Tensor,
                is_decode: bool) -> torch.Tensor:
        forward_batch = ForwardBatch(is_decode, out_cache_loc, KVPool(ckv_cache, k_rope_cache, index_k_cache))
        zero_allocator = BumpAllocator(torch.zeros(1))
        for layer in self.layers:
            hidden_states = layer(positions, hidden_states, forward_batch, zero_allocator)
        return self.norm(hidden_states)
