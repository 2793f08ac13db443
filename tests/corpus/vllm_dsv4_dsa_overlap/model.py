"""DeepSeek-V4 decoder layers on vllm-ascend: DSA attention (``dsa.py``) with a per-layer compress ratio, then an FFN.

Shaped after the DeepSeek-V4 layers vllm-ascend runs with ``AscendDSAImpl``
(``vllm_ascend/attention/dsa_v1.py``): each layer norms its input, runs the
attention over its own tuple of caches (the compressed KV cache, the window cache,
the compressor's state cache, and the indexer's state, key and scale caches), adds
the residual, then an FFN. A layer's compress ratio (``compress_ratios``) decides
whether it has a compressor and an indexer (4) or attends over its window only
(1). The rotary tables are read at the batch's positions once, on main, as the
metadata builder does (``cos``/``sin`` per layer in upstream's metadata).
``is_prefill`` stands for ``num_prefills > 0``.

Idioms: non_tensor_args (a tuple of per-layer cache tuples, ``is_prefill: bool``).
"""

from __future__ import annotations

import torch
from torch import nn

from .dsa import AscendDSAImpl
from .weights import LayerWeights, Shape


class DeepseekV4DecoderLayer(LayerWeights):
    def __init__(self, shape: Shape, compress_ratio: int, multistream: bool) -> None:
        super().__init__(shape)
        self.attn = AscendDSAImpl(shape, compress_ratio, multistream)

    def forward(self, x: torch.Tensor, kv_cache: tuple[torch.Tensor, ...], cos: torch.Tensor, sin: torch.Tensor,
                slot_mapping: torch.Tensor, is_prefill: bool) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), kv_cache, cos, sin, slot_mapping, is_prefill=is_prefill)
        return x + self.ffn(self.ffn_norm(x))


class DeepseekV4Model(nn.Module):
    def __init__(self, shape: Shape, compress_ratios: tuple[int, ...], multistream: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DeepseekV4DecoderLayer(shape, r, multistream) for r in compress_ratios)
        self.register_buffer("inv_freq", 1e4 ** (-torch.arange(0, shape["rope_dim"], 2) / shape["rope_dim"]),
                             persistent=False)

    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor,
                kv_caches: tuple[tuple[torch.Tensor, ...], ...], slot_mapping: torch.Tensor,
                is_prefill: bool = False) -> torch.Tensor:
        freqs = positions.unsqueeze(-1).float() * self.inv_freq
        cos, sin = freqs.cos().repeat(1, 2), freqs.sin().repeat(1, 2)
        for layer, kv_cache in zip(self.layers, kv_caches):
            hidden_states = layer(hidden_states, kv_cache, cos, sin, slot_mapping, is_prefill)
        return hidden_states
