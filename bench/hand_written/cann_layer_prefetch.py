"""Layer prefetch by hand: weights staged one layer ahead, chunks quantized in one block, activations offloaded.

- "prefetch": each staging reads parameters only (no fork); the main stream waits
  for it before the layer that uses it; a staged weight is kept for the main stream
  when a staging is issued after the layer that reads it (only the first here:
  each staging runs one layer ahead).
- "quant": one block per layer quantizes every chunk of ``normed`` (one fork; the
  main stream reads ``normed`` again, so it is kept for "quant"), recording one
  event per chunk, which the main stream waits for right before that chunk's matmul.
- "d2h": the offload of each layer's output waits for it (one fork) and keeps it,
  except the last, which is the graph output.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import runtime

SOURCE = "corpus:cann_layer_prefetch"
USER_EVENTS = ()


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _stage(self, layer: nn.Module, event: str) -> torch.Tensor:
        with runtime.stream("prefetch"):
            up_weight = layer.up_qweight * layer.up_scale
            self.m.layers_staged.add_(1)
            runtime.record(event)
        return up_weight

    def _mlp(self, mlp: nn.Module, normed: torch.Tensor, up_weight: torch.Tensor) -> torch.Tensor:
        chunks = normed.split(self.m.chunk)
        runtime.record("quant_fork")
        with runtime.stream("quant"):
            runtime.wait("quant_fork")
            runtime.record_stream(normed, "quant")
            quantized = []
            for i, chunk in enumerate(chunks):
                scale = chunk.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
                quantized.append((torch.round(chunk / scale), scale))
                mlp.chunks_quantized.add_(1)
                runtime.record(f"chunk{i}")
        outputs = []
        for i, (chunk, (x_int8, scale)) in enumerate(zip(chunks, quantized)):
            gate = F.silu(mlp.gate_proj(chunk))
            runtime.wait(f"chunk{i}")
            outputs.append(mlp.down_proj(gate * ((x_int8 @ up_weight.T) * scale)))
        return torch.cat(outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        layers = self.m.layers
        up_weight = self._stage(layers[0], "staged0")
        for i, layer in enumerate(layers):
            if i + 1 < len(layers):
                next_up_weight = self._stage(layers[i + 1], f"staged{i + 1}")
            q, k, v = layer.qkv(layer.norm(x)).chunk(3, dim=-1)
            x = x + (q @ k.T * q.shape[-1] ** -0.5).softmax(dim=-1) @ v
            runtime.wait(f"staged{i}")
            if i + 2 < len(layers):  # a staging is issued after this layer reads the weight
                runtime.record_stream(up_weight, "default")
            x = x + self._mlp(layer.mlp, layer.norm(x), up_weight)
            runtime.record("d2h_fork")
            with runtime.stream("d2h"):
                runtime.wait("d2h_fork")
                if i + 1 < len(layers):
                    runtime.record_stream(x, "d2h")
                self.m.host_cache[i].copy_(x)
            if i + 1 < len(layers):
                up_weight = next_up_weight
        return x
