"""The MLA attention implementation, with the KV path and the query RoPE on a side stream.

Shaped after ``AscendMLATorchairImpl`` (vllm-ascend ``vllm_ascend/torchair/torchair_mla.py``):
in decode, ``exec_kv`` (KV projection, RMSNorm, RoPE, and the write into the paged
KV cache, one fused op upstream) and ``rope_single`` run on "mla_secondary" only when
the caller passes ``enable_multistream_mla=True``; the chunked-prefill tokens take the
same ``exec_kv`` with the flag left at its default (``False``). ``exec_kv`` writes the
``(nope, rope)`` cache tuple in place, and the main-stream attention then reads it.

Idioms: param_when (``when="enable_multistream_mla"``: passed by keyword, positionally,
or left to its default), non_tensor_args (a tuple cache, the metadata object,
``is_prefill: bool``, an unannotated flag), container_returns (``exec_kv`` returns a
3-tuple).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream

from .metadata import AttentionMetadata
from .rope import rotate


class MLAImpl(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, kv_lora_rank: int, heads: int, nope_dim: int, rope_dim: int,
                 v_dim: int) -> None:
        super().__init__()
        self.heads, self.nope_dim, self.rope_dim, self.kv_lora_rank = heads, nope_dim, rope_dim, kv_lora_rank
        self.scale = (nope_dim + rope_dim) ** -0.5
        self.kv_a_proj_with_mqa = nn.Linear(hidden, kv_lora_rank + rope_dim, bias=False)
        self.kv_a_layernorm = nn.Parameter(1 + 0.1 * torch.randn(kv_lora_rank))
        self.q_proj = nn.Linear(q_lora_rank, heads * (nope_dim + rope_dim), bias=False)
        self.W_UK_T = nn.Parameter(torch.randn(heads, nope_dim, kv_lora_rank) * nope_dim**-0.5)
        self.W_UV = nn.Parameter(torch.randn(heads, kv_lora_rank, v_dim) * kv_lora_rank**-0.5)
        self.o_proj = nn.Linear(heads * v_dim, hidden, bias=False)

    @on_stream("mla_secondary", when="enable_multistream_mla")
    @keep_output
    def exec_kv(self, hidden_states: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                kv_cache: tuple[torch.Tensor, torch.Tensor], attn_metadata: AttentionMetadata, is_prefill: bool,
                enable_multistream_mla: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        split = attn_metadata.num_decode_tokens
        slots = attn_metadata.slot_mapping[split:] if is_prefill else attn_metadata.slot_mapping[:split]
        kv = self.kv_a_proj_with_mqa(hidden_states)
        kv_c, k_pe = kv.split([self.kv_lora_rank, self.rope_dim], dim=-1)
        k_nope = F.rms_norm(kv_c, (self.kv_lora_rank,), self.kv_a_layernorm, eps=1e-6)
        k_pe = rotate(k_pe, cos, sin)
        kv_cache[0].index_copy_(0, slots, k_nope)
        kv_cache[1].index_copy_(0, slots, k_pe)
        return k_pe, k_nope, kv

    @on_stream("mla_secondary", when="enable_multistream_mla")
    @keep_output
    def rope_single(self, x, cos, sin, enable_multistream_mla=False):
        return rotate(x, cos.unsqueeze(1), sin.unsqueeze(1))

    def _q_proj_and_k_up_proj(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q = self.q_proj(x).view(-1, self.heads, self.nope_dim + self.rope_dim)
        q_nope, q_pe = q.split([self.nope_dim, self.rope_dim], dim=-1)
        return torch.bmm(q_nope.transpose(0, 1), self.W_UK_T).transpose(0, 1), q_pe

    def _attend(self, ql_nope: torch.Tensor, q_pe: torch.Tensor, kv_cache: tuple[torch.Tensor, torch.Tensor]):
        nope_cache, rope_cache = kv_cache
        scores = torch.einsum("tnl,sl->tns", ql_nope, nope_cache) + torch.einsum("tnr,sr->tns", q_pe, rope_cache)
        return torch.einsum("tns,sl->tnl", (scores * self.scale).softmax(dim=-1), nope_cache)

    def _v_up_proj_and_o_proj(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.bmm(x.transpose(0, 1), self.W_UV).transpose(0, 1)
        return self.o_proj(x.reshape(x.shape[0], -1))

    def forward(self, hidden_states_or_q_c: torch.Tensor, hidden_states: torch.Tensor,
                kv_cache: tuple[torch.Tensor, torch.Tensor], attn_metadata: AttentionMetadata | None,
                enable_multistream_mla: bool = False, ckq: torch.Tensor | None = None) -> torch.Tensor:
        if attn_metadata is None:
            return hidden_states.new_zeros(hidden_states.shape)
        split = attn_metadata.num_decode_tokens
        cos, sin = attn_metadata.decode.cos, attn_metadata.decode.sin
        outputs = []
        if attn_metadata.num_decodes > 0:
            decode_k_pe, decode_k_nope, _ = self.exec_kv(hidden_states[:split], cos[:split], sin[:split], kv_cache,
                                                         attn_metadata, False,
                                                         enable_multistream_mla=enable_multistream_mla)
            ql_nope, q_pe = self._q_proj_and_k_up_proj(hidden_states_or_q_c[:split])
            q_pe = self.rope_single(q_pe, cos[:split], sin[:split], enable_multistream_mla)
            outputs.append(self._v_up_proj_and_o_proj(self._attend(ql_nope, q_pe, kv_cache)))
        if attn_metadata.num_prefills > 0:
            self.exec_kv(hidden_states[split:], cos[split:], sin[split:], kv_cache, attn_metadata, True)
            ql_nope, q_pe = self._q_proj_and_k_up_proj(hidden_states_or_q_c[split:])
            q_pe = self.rope_single(q_pe, cos[split:], sin[split:])
            outputs.append(self._v_up_proj_and_o_proj(self._attend(ql_nope, q_pe, kv_cache)))
        return torch.cat(outputs)
