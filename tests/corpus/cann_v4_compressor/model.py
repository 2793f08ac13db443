"""DeepSeek-V4 decode layers: the kernel metadata on "metadata_stream", then attention and an MLP per layer.

Shaped after ``DeepseekV3ForCausalLM.generate_kernel_metadata`` and ``DeepseekV3Model.forward``
in cann-recipes-infer ``models/deepseek_v4/models/modeling_deepseek.py`` (decode):
the sparse attention kernels' metadata (one per compress ratio, and the lightning
indexer's) is computed on "metadata_stream" from the sequence lengths while the
main stream makes the rotary tables and runs the layers; upstream each layer's
``sparse_attn`` waits for ``metadata_event[1]`` (an event recorded by the top
model and waited for in every layer's attention); here the metadata is passed to
the layers, so the join comes before the first layer. Each layer's
``compress_ratio`` comes from ``compress_ratios`` (upstream's config: c1a, c4a and
c128a layers interleaved), so each layer uses other streams (``attention.py``).
The hyper-connections (mHC) and the MoE are left out: a residual and a dense MLP
stand in for them.

Idioms: container_returns (the metadata as a dict of tensors), non_tensor_args (per-layer
tuples of caches), module_constants (the stream tag), per_layer_streams (the layers'
compress ratios choose their streams).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import on_stream

from .attention import Attention
from .layers import RMSNorm
from .weights import LayerWeights

METADATA_STREAM = "metadata_stream"


class DecoderLayer(LayerWeights):
    def __init__(self, shape: dict[str, int], compress_ratio: int, multistream: bool) -> None:
        super().__init__(shape)
        self.attn = Attention(shape, compress_ratio, multistream)

    def forward(self, hidden_states: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, slot_mapping: torch.Tensor,
                kernel_metadata: dict[str, torch.Tensor],
                layer_cache: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> torch.Tensor:
        residual = hidden_states
        hidden_states = self.attn(self.attn_norm(hidden_states), cos, sin, slot_mapping, kernel_metadata, layer_cache)
        hidden_states = residual + hidden_states
        return hidden_states + self.ffn(self.ffn_norm(hidden_states))


class DeepseekV4Model(nn.Module):
    def __init__(self, shape: dict[str, int], compress_ratios: tuple[int, ...], multistream: bool = True) -> None:
        super().__init__()
        self.enable_multi_streams = multistream
        self.cmp_slots, self.rope_dim = shape["cmp_slots"], shape["rope_dim"]
        self.layers = nn.ModuleList(DecoderLayer(shape, ratio, multistream) for ratio in compress_ratios)
        self.norm = RMSNorm(shape["hidden"])

    @on_stream(METADATA_STREAM, when="self.enable_multi_streams")
    def generate_kernel_metadata(self, actual_seq_k: torch.Tensor) -> dict[str, torch.Tensor]:
        metadata = {f"c{ratio}a_metadata": ((actual_seq_k + ratio - 1) // ratio).clamp(max=self.cmp_slots)
                    for ratio in (4, 128)}
        metadata["c1a_metadata"] = actual_seq_k.clone()
        metadata["li_metadata"] = metadata["c4a_metadata"].clone()
        return metadata

    def generate_cos_sin(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        inv_freq = 10000 ** -(torch.arange(0, self.rope_dim, 2, dtype=torch.float32) / self.rope_dim)
        freqs = positions.to(torch.float32).unsqueeze(-1) * inv_freq
        return freqs.cos(), freqs.sin()

    def forward(self, hidden_states: torch.Tensor, positions: torch.Tensor, slot_mapping: torch.Tensor,
                actual_seq_k: torch.Tensor,
                kv_caches: tuple[tuple[torch.Tensor, torch.Tensor, torch.Tensor], ...]) -> torch.Tensor:
        kernel_metadata = self.generate_kernel_metadata(actual_seq_k)
        cos, sin = self.generate_cos_sin(positions)
        for layer, layer_cache in zip(self.layers, kv_caches):
            hidden_states = layer(hidden_states, cos, sin, slot_mapping, kernel_metadata, layer_cache)
        return self.norm(hidden_states)
