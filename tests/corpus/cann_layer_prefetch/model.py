"""Decoder layers whose MLP up-projections are stored quantized and dequantized one layer ahead.

Shaped after cann-recipes-infer's LongCat-Flash model loop, which hands each layer
its ``next_layer`` so that the next layer's weights are prefetched on a prefetch
stream while the current layer computes (``models/longcat_flash/models/modeling_longcat_flash.py``),
and after DeepSeek-V3.2's per-layer cache offload on a device-to-host stream
(``models/deepseek_v3_2_exp/models/modeling_deepseek.py``). Here the staging is a
dequantization whose result the next iteration uses; the offload copies each
layer's output into a host-side buffer that nothing reads until the end. Every
layer shares the same "prefetch" and "d2h" streams. Both stream bodies end in a
``finally`` that does device work.

Idioms: loop_call (a result used in the next iteration; a call whose only effect is
a write), try_finally, deep (``build(layers=N)``).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import keep_output, on_stream

from .mlp import ChunkedMLP
from .weights import quantized_weight


class Layer(nn.Module):
    def __init__(self, hidden: int, inter: int, chunk: int, multistream: bool) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(hidden, eps=1e-6)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.up_qweight, self.up_scale = quantized_weight(inter, hidden)
        self.mlp = ChunkedMLP(hidden, inter, chunk, multistream)

    def forward(self, hidden_states: torch.Tensor, up_weight: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm(hidden_states)).chunk(3, dim=-1)
        hidden_states = hidden_states + (q @ k.T * q.shape[-1] ** -0.5).softmax(dim=-1) @ v
        return hidden_states + self.mlp(self.norm(hidden_states), up_weight)


class PrefetchModel(nn.Module):
    def __init__(self, hidden: int, inter: int, tokens: int, chunk: int, layers: int = 3,
                 multistream: bool = True) -> None:
        super().__init__()
        self.multistream = multistream
        self.layers = nn.ModuleList(Layer(hidden, inter, chunk, multistream) for _ in range(layers))
        self.register_buffer("host_cache", torch.zeros(layers, tokens, hidden))
        self.register_buffer("layers_staged", torch.zeros((), dtype=torch.long))

    @on_stream("prefetch", when="self.multistream")
    @keep_output
    def stage_weights(self, qweight: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        try:
            return qweight * scale
        finally:
            self.layers_staged.add_(1)

    @on_stream("d2h", when="self.multistream")
    def offload(self, hidden_states: torch.Tensor, layer_id: int) -> None:
        self.host_cache[layer_id].copy_(hidden_states)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        up_weight = self.stage_weights(self.layers[0].up_qweight, self.layers[0].up_scale)
        for i, layer in enumerate(self.layers):
            next_layer = self.layers[i + 1] if i + 1 < len(self.layers) else None
            if next_layer is not None:
                next_up_weight = self.stage_weights(next_layer.up_qweight, next_layer.up_scale)
            hidden_states = layer(hidden_states, up_weight)
            self.offload(hidden_states, i)
            if next_layer is not None:
                up_weight = next_up_weight
        return hidden_states
