"""MLA decode on the GE (max-autotune) path, with the KV and RoPE work on the "mla_secondary" stream.

Shaped after ``AscendMLATorchairImpl.forward`` in vllm-ascend
``vllm_ascend/torchair/torchair_mla.py`` (decode in graph mode): the KV projection,
its RMS norm with RoPE and the cache write (``exec_kv``) and the query's RoPE
(``rope_single``) run on "mla_secondary" while the query projections run on the
main stream; the attention reads the caches the side stream wrote. Upstream
orders this with five ``npu_wait_tensor`` calls; here is what gives each order:

| # | upstream (stream) | here |
| --- | --- | --- |
| 1 | ``npu_wait_tensor(hidden_states_or_kv_c_normed, ckq)`` (mla_secondary) | the fork of ``kv_a_proj``: its stream waits for the caller's work, ``ckq`` included |
| 2 | ``npu_wait_tensor(decode_hs_or_q_c, cos)`` (main) | nothing: the ``cos`` gather runs on the main stream before the query projection, in program order |
| 3 | ``npu_wait_tensor(decode_hs_or_q_c, sin)`` (main) | nothing, as for 2 |
| 4 | ``npu_wait_tensor(decode_hs_or_q_c, decode_kv)`` (main) | ``@records("kv_projected")`` on ``kv_a_proj``, ``@after("kv_projected")`` on ``q_proj_and_k_up_proj`` |
| 5 | ``npu_wait_tensor(decode_q_pe, decode_k_pe)`` (mla_secondary) | ``rope_single`` on the same stream after ``kv_rmsnorm_rope_cache``; its fork orders it after ``q_pe`` |

The caller's last value before each side call is what upstream has there: a
subscript of a submodule call (``self.q_a_proj(x)[0]``) or a tuple unpacked.

Idioms: module_constants (the stream tag), container_returns (tuples, a tuple
cache), non_tensor_args (the cache tuple).
"""

from __future__ import annotations

import torch

from npudsl import after, on_stream, records

from .layers import MLAWeights, rms_norm, rotate, write_slots

MLA_SECONDARY = "mla_secondary"


class MLADecode(MLAWeights):
    def __init__(self, *args: int, multistream: bool = True, **kwargs: int) -> None:
        super().__init__(*args, **kwargs)
        self.enable_multistream_mla = multistream

    @on_stream(MLA_SECONDARY, when="self.enable_multistream_mla")
    @records("kv_projected")
    def kv_a_proj(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.kv_a_proj_with_mqa(hidden_states)[0]

    @on_stream(MLA_SECONDARY, when="self.enable_multistream_mla")
    def kv_rmsnorm_rope_cache(self, kv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                              kv_cache: tuple[torch.Tensor, torch.Tensor], slots: torch.Tensor):
        k_nope, k_pe = kv.split([self.kv_lora_rank, self.rope_dim], dim=-1)
        k_nope = rms_norm(k_nope, self.kv_a_layernorm_weight)
        return write_slots(kv_cache[0], slots, k_nope), write_slots(kv_cache[1], slots, rotate(k_pe, cos, sin))

    @after("kv_projected")
    def q_proj_and_k_up_proj(self, q_c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q_nope, q_pe = self.q_proj(q_c)[0].view(-1, self.heads, self.nope_dim + self.rope_dim).split(
            [self.nope_dim, self.rope_dim], dim=-1)
        return torch.bmm(q_nope.transpose(0, 1), self.W_UK_T).transpose(0, 1), q_pe

    @on_stream(MLA_SECONDARY, when="self.enable_multistream_mla")
    def rope_single(self, q_pe: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        return rotate(q_pe, cos.unsqueeze(1), sin.unsqueeze(1))

    def attend(self, ql_nope: torch.Tensor, q_pe: torch.Tensor, nope_cache: torch.Tensor,
               pe_cache: torch.Tensor) -> torch.Tensor:
        scores = torch.einsum("bnl,sl->bns", ql_nope, nope_cache) + torch.einsum("bnr,sr->bns", q_pe, pe_cache)
        latent = torch.einsum("bns,sl->nbl", scores.softmax(dim=-1), nope_cache)
        return self.o_proj(torch.bmm(latent, self.W_UV).transpose(0, 1).flatten(1))[0]

    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor,
                kv_cache: tuple[torch.Tensor, torch.Tensor], slots: torch.Tensor) -> torch.Tensor:
        ckq = self.q_a_proj(hidden_states)[0]
        kv = self.kv_a_proj(hidden_states)
        cos, sin = self.cos_cached[positions], self.sin_cached[positions]
        nope_cache, pe_cache = self.kv_rmsnorm_rope_cache(kv, cos, sin, kv_cache, slots)
        ql_nope, q_pe = self.q_proj_and_k_up_proj(self.q_a_layernorm(ckq))
        q_pe = self.rope_single(q_pe, cos, sin)
        return self.attend(ql_nope, q_pe, nope_cache, pe_cache)
