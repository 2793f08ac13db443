"""Single-stream twin of :mod:`corpus.cann_layer_prefetch` (same parameter and buffer names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .weights import quantized_weight


class _Mlp(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)
        self.register_buffer("chunks_quantized", torch.zeros((), dtype=torch.long))


class _Layer(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(hidden, eps=1e-6)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.up_qweight, self.up_scale = quantized_weight(inter, hidden)
        self.mlp = _Mlp(hidden, inter)


class PrefetchModel(nn.Module):
    def __init__(self, hidden: int, inter: int, tokens: int, chunk: int, layers: int = 3) -> None:
        super().__init__()
        self.chunk = chunk
        self.layers = nn.ModuleList(_Layer(hidden, inter) for _ in range(layers))
        self.register_buffer("host_cache", torch.zeros(layers, tokens, hidden))
        self.register_buffer("layers_staged", torch.zeros((), dtype=torch.long))

    def _mlp(self, mlp: _Mlp, x: torch.Tensor, up_weight: torch.Tensor) -> torch.Tensor:
        outputs = []
        for chunk in x.split(self.chunk):
            scale = chunk.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
            up = (torch.round(chunk / scale) @ up_weight.T) * scale
            outputs.append(mlp.down_proj(F.silu(mlp.gate_proj(chunk)) * up))
            mlp.chunks_quantized.add_(1)
        return torch.cat(outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            up_weight = layer.up_qweight * layer.up_scale
            self.layers_staged.add_(1)
            q, k, v = layer.qkv(layer.norm(x)).chunk(3, dim=-1)
            x = x + (q @ k.T * q.shape[-1] ** -0.5).softmax(dim=-1) @ v
            x = x + self._mlp(layer.mlp, layer.norm(x), up_weight)
            self.host_cache[i].copy_(x)
        return x
