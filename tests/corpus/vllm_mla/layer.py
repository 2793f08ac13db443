"""The attention layer that decides, per call, whether the MLA side stream is used.

Shaped after ``TorchairDeepseekV2MLAAttention.forward`` (vllm-ascend
``vllm_ascend/torchair/models/torchair_deepseek_v2.py``): the flag is on only for
decode-only batches, and reaches the implementation through a keyword dict.

Idioms: param_when (the caller side: the flag computed per call and passed as ``**kwargs``).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .attention import MLAImpl
from .metadata import AttentionMetadata


class MLAAttention(nn.Module):
    def __init__(self, hidden: int, q_lora_rank: int, kv_lora_rank: int, heads: int, nope_dim: int, rope_dim: int,
                 v_dim: int, multistream: bool = True) -> None:
        super().__init__()
        self.enable_multistream_mla = multistream
        self.q_a_proj = nn.Linear(hidden, q_lora_rank, bias=False)
        self.q_a_layernorm = nn.Parameter(1 + 0.1 * torch.randn(q_lora_rank))
        self.mla_attn = MLAImpl(hidden, q_lora_rank, kv_lora_rank, heads, nope_dim, rope_dim, v_dim)

    def forward(self, hidden_states: torch.Tensor, kv_cache: tuple[torch.Tensor, torch.Tensor],
                attn_metadata: AttentionMetadata | None) -> torch.Tensor:
        enable_multistream_mla = (self.enable_multistream_mla and attn_metadata is not None
                                  and not attn_metadata.with_prefill and attn_metadata.num_decodes > 0)
        forward_kwargs = {"enable_multistream_mla": enable_multistream_mla}
        ckq = self.q_a_proj(hidden_states)
        hidden_states_or_q_c = F.rms_norm(ckq, (ckq.shape[-1],), self.q_a_layernorm, eps=1e-6)
        forward_kwargs["ckq"] = ckq
        return self.mla_attn(hidden_states_or_q_c, hidden_states, kv_cache, attn_metadata, **forward_kwargs)
