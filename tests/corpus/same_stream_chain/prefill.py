"""MLA prefill with its KV branch as a chain of three calls on one side stream.

Shaped after the prefill of ``AscendDeepseekAttention_MLA`` in omni-infer
``omni/models/deepseek/deepseek_v3_a2.py`` with ``prefill_mla_multi_stream``: on
``kv_stream``, the latent cache is normalized, its RoPE part rotated, then
up-projected by ``kv_b_proj`` and concatenated into ``k`` and ``v``; upstream
issues these as two consecutive ``with torch.npu.stream(kv_stream):`` blocks with
no main-stream work between, then the main stream waits for ``kv_stream`` before
the attention. Here the chain is three stream calls (``kv_norm``, ``k_rope``,
``kv_up``), each reading what the previous ones made on the same stream, while the
query path runs on the main stream; the attention joins them. What crosses
streams: the latent cache and ``cos``/``sin`` (main to ``kv_stream``), ``k`` and
``v`` (back); the values between the chain's calls never leave ``kv_stream``.

Idioms: module_constants (the stream tag), container_returns (``k, v`` as a tuple).
"""

from __future__ import annotations

import torch

from npudsl import on_stream

from .weights import PrefillWeights, rotate

KV_STREAM = "kv_stream"


class PrefillMLA(PrefillWeights):
    def __init__(self, *args: int, multistream: bool = True, **kwargs: int) -> None:
        super().__init__(*args, **kwargs)
        self.prefill_mla_multi_stream = multistream

    @on_stream(KV_STREAM, when="self.prefill_mla_multi_stream")
    def kv_norm(self, latent_cache: torch.Tensor) -> torch.Tensor:
        return self.kv_a_layernorm(latent_cache[..., : self.kv_lora_rank])

    @on_stream(KV_STREAM, when="self.prefill_mla_multi_stream")
    def k_rope(self, latent_cache: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        return rotate(latent_cache[..., self.kv_lora_rank :], cos, sin)

    @on_stream(KV_STREAM, when="self.prefill_mla_multi_stream")
    def kv_up(self, kv_a: torch.Tensor, k_pe: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        kv = self.kv_b_proj(kv_a)[0].view(-1, self.heads, self.nope_dim + self.v_dim)
        k_nope, v = kv.split([self.nope_dim, self.v_dim], dim=-1)
        return torch.cat([k_nope, k_pe.unsqueeze(1).expand(-1, self.heads, -1)], dim=-1), v

    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        cos, sin = self.cos_cached[positions], self.sin_cached[positions]
        latent_cache = self.kv_a_proj_with_mqa(hidden_states)[0]
        kv_a = self.kv_norm(latent_cache)
        k_pe = self.k_rope(latent_cache, cos, sin)
        k, v = self.kv_up(kv_a, k_pe)
        q = self.q_path(hidden_states, cos, sin)
        return self.attend(q, k, v)
