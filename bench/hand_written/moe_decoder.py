"""The MoE decoder by hand: per layer one fork, one join and one ``record_stream``.

The shared expert reads ``y`` (made on the main stream) on the "shared" stream,
so that stream waits for the fork event first; the main stream waits for the
join event just before the sum. ``y`` is read last by the routed experts on the
main stream, whose next allocations are not ordered after the shared stream's
read: it is kept for "shared" with ``record_stream``. The shared result needs
none: the next allocation on "shared" comes after the next fork, itself after
the sum that read it.
"""

from __future__ import annotations

from torch import nn
from torch.nn import functional as F

from npudsl import runtime

SOURCE = "example:moe_decoder"
USER_EVENTS = ()


def _shared_expert(shared: nn.Module, y):
    gate, up = shared.gate_up(y).chunk(2, dim=-1)
    return shared.down(F.silu(gate) * up)


class Hand(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x):
        for layer in self.model.layers:
            h = x + layer.mix(layer.attn_norm(x))
            y = layer.mlp_norm(h)
            runtime.record("fork")
            with runtime.stream("shared"):
                runtime.wait("fork")
                runtime.record_stream(y, "shared")
                shared = _shared_expert(layer.shared, y)
                runtime.record("join")
            routed = layer.experts(y)
            runtime.wait("join")
            x = h + routed + shared
        return x
