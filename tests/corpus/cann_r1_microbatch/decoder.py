"""DeepSeek-R1's decoder layer, with the step methods the micro-batch loop calls; its two all-to-alls on "stream1".

Shaped after ``DeepseekV3DecoderLayer`` in cann-recipes-infer
``models/deepseek_r1/models/modeling_deepseek.py``: ``forward_attn`` (input norm with
the residual, attention writing the layer's KV cache in place),
``forward_post_attention_layernorm``, ``forward_mlp``, and the methods delegating to
the MoE (``forward_gate_init_routing``, ``forward_dispatch_double_routing``, ... all
``(self, *arg, **kwargs)`` as upstream). Upstream's micro-batch loop (``model.py``)
calls the dispatch and the combine under ``with torch.npu.stream(self.stream1)``;
decorated, those two delegating methods are on ``STREAM1`` and their events are the
automatic fork and join of the values they read and make. ``use_stream1`` stands for
upstream's ``self.stream1`` existing (made when ``micro_batch_mode`` is on); off, the
same micro-batches run on the main stream.

Idioms: config_when (``when="self.use_stream1"`` on the methods), optional_star_static (tensors and lists passed through ``*arg`` of the stream
methods), module_constants (the stream tag), container_returns (the dispatch's
five-tuple with two lists of ints).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import on_stream

from .layers import MLP, Attention, RMSNorm, rotary
from .moe import DeepseekV3MoE

STREAM1 = "stream1"


class DeepseekV3DecoderLayer(nn.Module):
    def __init__(self, layer_idx: int, hidden: int, inter: int, moe_inter: int, experts: int, top_k: int,
                 first_k_dense_replace: int, use_stream1: bool) -> None:
        super().__init__()
        self.layer_idx, self.use_stream1 = layer_idx, use_stream1
        self.is_moe = layer_idx >= first_k_dense_replace
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = Attention(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = DeepseekV3MoE(hidden, moe_inter, experts, top_k) if self.is_moe else MLP(hidden, inter)

    def forward(self, hidden_states: torch.Tensor, cos_sin: tuple[torch.Tensor, torch.Tensor],
                kv_cache: torch.Tensor, slot_mapping: torch.Tensor, seq_lens: tuple[int, ...],
                past_residual: torch.Tensor | None, is_prefill: bool) -> tuple[torch.Tensor, torch.Tensor]:
        hidden_states, residual = self.forward_attn(hidden_states, cos_sin, kv_cache, slot_mapping, seq_lens,
                                                    past_residual)
        hidden_states, residual = self.forward_mlp(hidden_states, residual, is_prefill)
        return residual, hidden_states

    def forward_attn(self, hidden_states: torch.Tensor, cos_sin: tuple[torch.Tensor, torch.Tensor],
                     kv_cache: torch.Tensor, slot_mapping: torch.Tensor, seq_lens: tuple[int, ...],
                     past_residual: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        hidden_states, residual = self.input_layernorm(hidden_states, past_residual)
        hidden_states = self.self_attn(hidden_states, cos_sin, kv_cache[self.layer_idx], slot_mapping, seq_lens)
        return hidden_states, residual

    def forward_post_attention_layernorm(self, hidden_states: torch.Tensor,
                                         past_residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.post_attention_layernorm(hidden_states, past_residual)

    def forward_mlp(self, hidden_states: torch.Tensor, residual: torch.Tensor,
                    is_prefill: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        hidden_states, residual = self.post_attention_layernorm(hidden_states, residual)
        if self.is_moe:
            hidden_states = self.mlp(hidden_states, is_prefill=is_prefill)
        else:
            hidden_states = self.mlp(hidden_states)
        return hidden_states, residual

    def forward_gate_init_routing(self, *arg, **kwargs):
        return self.mlp.forward_gate_init_routing(*arg, **kwargs)

    @on_stream(STREAM1, when="self.use_stream1")
    def forward_dispatch_double_routing(self, *arg, **kwargs):
        return self.mlp.dispatch_double_routing(*arg, **kwargs)

    def forward_shared_expert(self, *arg, **kwargs):
        return self.mlp.forward_shared_expert(*arg, **kwargs)

    def forward_expert(self, *arg, **kwargs):
        return self.mlp.forward_expert(*arg, **kwargs)

    @on_stream(STREAM1, when="self.use_stream1")
    def forward_combine_double_routing(self, *arg, **kwargs):
        return self.mlp.forward_combine_double_routing(*arg, **kwargs)

    def forward_finalize_routing(self, *arg, **kwargs):
        return self.mlp.forward_finalize_routing(*arg, **kwargs)
