"""An MLP run over token chunks, each chunk's activation quantized on the "quant" stream.

Shaped after omni-infer's chunked MoE (``DeepseekMoE.chunked_gmm`` in
``omni/models/deepseek/deepseek_v3_a2.py``), which walks the tokens in chunks: here
the quantization of a chunk goes to a side stream while the main stream computes the
chunk's gate, and its result is used later in the same iteration. The quantizing
body counts the chunks it saw in a ``finally`` block.

Idioms: loop_call (the result used later in the same iteration), try_finally
(``try: return`` / ``finally:`` with device work in the ``finally``).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream


class ChunkedMLP(nn.Module):
    def __init__(self, hidden: int, inter: int, chunk: int, multistream: bool) -> None:
        super().__init__()
        self.chunk, self.multistream = chunk, multistream
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)
        self.register_buffer("chunks_quantized", torch.zeros((), dtype=torch.long))

    @on_stream("quant", when="self.multistream")
    @keep_output
    def quantize(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        try:
            scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-6) / 127
            return torch.round(x / scale), scale
        finally:
            self.chunks_quantized.add_(1)

    def forward(self, hidden_states: torch.Tensor, up_weight: torch.Tensor) -> torch.Tensor:
        outputs = []
        for chunk in hidden_states.split(self.chunk):
            x_int8, scale = self.quantize(chunk)
            gate = F.silu(self.gate_proj(chunk))
            outputs.append(self.down_proj(gate * ((x_int8 @ up_weight.T) * scale)))
        return torch.cat(outputs)
