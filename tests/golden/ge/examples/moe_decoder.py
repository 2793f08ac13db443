"""A mixture-of-experts decoder, several layers deep, with the shared expert on a side stream.

What overlaps with what: in every layer, the shared expert (``SharedExpert``,
decorated as a whole) runs on the "shared" stream while the router and the
routed experts run on the main stream. npudsl inserts the synchronization: the
shared stream first waits for the main stream's work before the call (the
normalized input is ready), and the main stream waits for the shared stream
just before the sum that reads its result. All layers share one "shared"
stream and one pair of events, however many layers there are. With
``multistream=False`` (prefill, say) the same code runs on one stream.
"""

from contextlib import nullcontext

import torch
import torchair
from torch import nn
from torch.nn import functional as F


class SharedExpert(nn.Module):
    def __init__(self, hidden: int, inter: int, multistream: bool = True) -> None:
        super().__init__()
        self.multistream = multistream
        self.gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class RoutedExperts(nn.Module):
    """Top-k routing over a few small experts, computed densely so results are deterministic."""

    def __init__(self, hidden: int, inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(hidden, experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(experts, hidden, inter) * hidden**-0.5)
        self.w_out = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    def forward(self, x):
        scores = self.router(x).softmax(dim=-1)
        weights, chosen = scores.topk(self.top_k, dim=-1)
        mask = torch.zeros_like(scores).scatter(-1, chosen, weights)
        hidden = F.silu(torch.einsum("th,ehi->tei", x, self.w_in))
        out = torch.einsum("tei,eih->teh", hidden, self.w_out)
        return torch.einsum("teh,te->th", out, mask)


class DecoderLayer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, multistream: bool) -> None:
        super().__init__()
        self.attn_norm = nn.LayerNorm(hidden)
        self.mix = nn.Linear(hidden, hidden, bias=False)
        self.mlp_norm = nn.LayerNorm(hidden)
        self.experts = RoutedExperts(hidden, inter, experts, top_k)
        self.shared = SharedExpert(hidden, inter, multistream)

    def forward(self, x):
        h = x + self.mix(self.attn_norm(x))
        y = self.mlp_norm(h)
        with torchair.scope.npu_stream_switch("shared", 0) if self.shared.multistream else nullcontext():
            shared = self.shared(y)
        routed = self.experts(y)
        return h + routed + shared


class MoEDecoder(nn.Module):
    def __init__(self, layers: int = 4, hidden: int = 64, inter: int = 128, experts: int = 8, top_k: int = 2,
                 multistream: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(hidden, inter, experts, top_k, multistream) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def example_inputs(tokens: int = 16, hidden: int = 64) -> tuple[torch.Tensor, ...]:
    return (torch.randn(tokens, hidden, generator=torch.Generator().manual_seed(0)),)
