"""DSA attention on the NPU: the MLA prologue or the q up projection on "alt_stream" beside the main stream.

Shaped after sglang
``python/sglang/srt/hardware_backend/npu/modules/deepseek_v2_attention_mla_npu.py``
(``forward_dsa_prepare_npu``, ``npu_mla_preprocess``, ``forward_dsa_core_npu``: module
functions taking the attention module ``m``, called by the attention by bare name).
Two schedules, chosen by the batch:

- decode with the fused MLA preprocess (``npu_mla_preprocess``): the main stream records
  an event, ``alt_stream`` waits for it and runs the whole fused prologue
  (``m.mla_preprocess.forward(...)``, which writes the latent and rope keys into the KV
  cache of ``forward_batch.token_to_kv_pool`` in place and hands ``forward_batch``,
  ``zero_allocator`` and ``positions`` back in its tuple); meanwhile the main stream
  projects ``hidden_states`` again and norms the q half into ``q_lora`` for the indexer;
  then the main stream waits for ``alt_stream``. Decorated: the preprocess class is the
  stream callable, and its results' first use (the indexer's ``positions`` and
  ``forward_batch``) is the join.
- prefill: ``q_lora`` (a clone of the normed q half) is made on the main stream,
  ``alt_stream`` waits for the main stream and runs ``q_b_proj`` (upstream also calls
  ``q.record_stream(alt_stream)`` there and records ``q_event``), the main stream norms the
  latent keys meanwhile and then waits for ``q_event`` before splitting ``q``.
  Decorated: ``q_b_proj_alt`` (a module function taking ``m``) is the stream callable.

Upstream's ``m.alt_stream is not None`` is ``m.use_alt_stream`` here, read by ``when=``
(false: every call stays on the main stream). The indexer, the attention and the
``w_vc`` projection run on the main stream: on prefill the product is copied into a
transposed view of an empty tensor (upstream passes that view as ``torch.bmm``'s
``out=``, which dynamo does not take), on decode ``batch_matmul_transpose`` writes its
output argument.

Idioms: non_tensor_args (the module ``m`` as first argument, ``forward_batch`` and
``zero_allocator`` passed through the stream call and returned in its tuple),
container_returns (a seven-tuple of tensors and objects, unpacked),
module_constants (the stream tag), param_when (``when="m.use_alt_stream"``, rooted at
the helper's parameter), side_cache_write (the prologue on ``alt_stream`` writes the
KV cache in place through ``forward_batch``; the main stream's attention reads and
writes it after the join).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from npudsl import on_stream

from .layers import BumpAllocator, ForwardBatch, attn_mqa, batch_matmul_transpose, mla_prolog

if TYPE_CHECKING:
    from .model import DeepseekV2AttentionMLA

ALT_STREAM = "alt_stream"


@on_stream(ALT_STREAM, when="self.use_alt_stream")
class NPUFusedMLAPreprocess(nn.Module):
    """``NPUFusedMLAPreprocess``: the fused MLA prologue of one layer, holding the layer's projections."""

    def __init__(self, m: "DeepseekV2AttentionMLA", use_alt_stream: bool) -> None:
        super().__init__()
        self.use_alt_stream = use_alt_stream
        self.fused_qkv_a_proj_with_mqa, self.q_b_proj = m.fused_qkv_a_proj_with_mqa, m.q_b_proj
        self.q_a_layernorm, self.kv_a_layernorm, self.rotary_emb = m.q_a_layernorm, m.kv_a_layernorm, m.rotary_emb
        self.w_kc = m.w_kc
        self.layer_id, self.num_local_heads = m.layer_id, m.num_local_heads
        self.q_lora_rank, self.kv_lora_rank = m.q_lora_rank, m.kv_lora_rank
        self.qk_nope_head_dim, self.qk_rope_head_dim, self.qk_head_dim = (
            m.qk_nope_head_dim, m.qk_rope_head_dim, m.qk_head_dim)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, forward_batch: ForwardBatch,
                zero_allocator: BumpAllocator) -> tuple[object, ...]:
        q_pe, k_pe, q_nope_out, k_nope = mla_prolog(self, positions, hidden_states, forward_batch)
        return q_pe, k_pe, q_nope_out, k_nope, forward_batch, zero_allocator, positions


@on_stream(ALT_STREAM, when="m.use_alt_stream")
def q_b_proj_alt(m: "DeepseekV2AttentionMLA", q_lora: torch.Tensor) -> torch.Tensor:
    return m.q_b_proj(q_lora)[0].view(-1, m.num_local_heads, m.qk_head_dim)


def npu_mla_preprocess(m: "DeepseekV2AttentionMLA", hidden_states: torch.Tensor, positions: torch.Tensor,
                       forward_batch: ForwardBatch, zero_allocator: BumpAllocator) -> tuple[object, ...]:
    (q_pe, k_pe, q_nope_out, k_nope, forward_batch, zero_allocator, positions) = m.mla_preprocess.forward(
        positions, hidden_states, forward_batch, zero_allocator)
    fused_qkv_a_proj_out = m.fused_qkv_a_proj_with_mqa(hidden_states)[0]
    q, _ = fused_qkv_a_proj_out.split([m.q_lora_rank, m.kv_lora_rank + m.qk_rope_head_dim], dim=-1)
    q_lora = m.q_a_layernorm(q)
    return q_pe, k_pe, q_nope_out, k_nope, q_lora, forward_batch, zero_allocator, positions


def forward_dsa_prepare_npu(m: "DeepseekV2AttentionMLA", positions: torch.Tensor, hidden_states: torch.Tensor,
                            forward_batch: ForwardBatch, zero_allocator: BumpAllocator) -> tuple[object, ...]:
    if forward_batch.is_decode:
        (q_pe, k_pe, q_nope_out, k_nope, q_lora, forward_batch, zero_allocator, positions) = npu_mla_preprocess(
            m, hidden_states, positions, forward_batch, zero_allocator)
    else:
        fused_qkv_a_proj_out = m.fused_qkv_a_proj_with_mqa(hidden_states)[0]
        q, latent_cache = fused_qkv_a_proj_out.split([m.q_lora_rank, m.kv_lora_rank + m.qk_rope_head_dim], dim=-1)
        q = m.q_a_layernorm(q)
        q_lora = q.clone()  # required for topk_indices
        q = q_b_proj_alt(m, q_lora)
        k_nope, k_pe = latent_cache.unsqueeze(1).split([m.kv_lora_rank, m.qk_rope_head_dim], dim=-1)
        k_nope = m.kv_a_layernorm(k_nope)
        q_nope, q_pe = q.split([m.qk_nope_head_dim, m.qk_rope_head_dim], dim=-1)
        q_nope_out = torch.bmm(q_nope.transpose(0, 1), m.w_kc)
        q_nope_out = q_nope_out.transpose(0, 1)
        q_pe, k_pe = m.rotary_emb(positions, q_pe, k_pe)
    topk_indices = m.indexer(hidden_states, q_lora, positions, forward_batch, m.layer_id)
    return q_pe, k_pe, q_nope_out, k_nope, topk_indices, forward_batch, zero_allocator, positions


def forward_dsa_core_npu(m: "DeepseekV2AttentionMLA", q_pe: torch.Tensor, k_pe: torch.Tensor, q_nope_out: torch.Tensor,
                         k_nope: torch.Tensor, topk_indices: torch.Tensor, forward_batch: ForwardBatch,
                         zero_allocator: BumpAllocator, positions: torch.Tensor) -> torch.Tensor:
    attn_output = attn_mqa(q_nope_out.contiguous(), k_nope.contiguous(), forward_batch, m.layer_id,
                           q_pe.contiguous(), k_pe.contiguous(), topk_indices)
    attn_output = attn_output.view(-1, m.num_local_heads, m.kv_lora_rank)
    attn_bmm_output = torch.empty((attn_output.shape[0], m.num_local_heads, m.v_head_dim), dtype=attn_output.dtype)
    if not forward_batch.is_decode:
        attn_output = attn_output.transpose(0, 1)
        # upstream: torch.bmm(..., out=<this transposed view>); dynamo takes no non-contiguous out=
        attn_bmm_output.view(-1, m.num_local_heads, m.v_head_dim).transpose(0, 1).copy_(torch.bmm(attn_output, m.w_vc))
    else:
        attn_output = attn_output.contiguous()
        batch_matmul_transpose(attn_output, m.w_vc, attn_bmm_output)
    attn_bmm_output = attn_bmm_output.reshape(-1, m.num_local_heads * m.v_head_dim)
    output, _ = m.o_proj(attn_bmm_output)
    return output
