"""vllm-ascend's native shared expert by hand: one block on the shared stream, the routed path's events inside it.

The three phases stay on one stream, so they share one switch; each waits for
its point of the routed path, as upstream's ``AscendSharedExperts.forward`` does
inside one ``npu_stream_switch``. The main stream waits for ``moe:shared_done``
before the sum. The phases read only the layer input (ready everywhere) and each
other's results (same stream); nothing is allocated on the shared stream after
the sum, so no ``record_stream`` is needed.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import runtime

SOURCE = "corpus:vllm_native_shared_expert"
USER_EVENTS = ("moe:before_dispatch", "moe:before_gmm2", "moe:before_combine", "moe:shared_done")


def _dispatch(x: torch.Tensor, ids: torch.Tensor, top_k: int) -> tuple[torch.Tensor, torch.Tensor]:
    return x.repeat_interleave(top_k, dim=0), ids.reshape(-1)


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.routed, self.shared = twin.experts, twin.shared_experts

    def _routed(self, x: torch.Tensor) -> torch.Tensor:
        routed = self.routed
        weights, ids = routed.gate(x).softmax(dim=-1).topk(routed.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        runtime.record("moe:before_dispatch")
        rows, expert_ids = _dispatch(x, ids, routed.top_k)
        gate, up = torch.bmm(rows.unsqueeze(1), routed.w13[expert_ids]).squeeze(1).chunk(2, dim=-1)
        act = F.silu(gate) * up
        runtime.record("moe:before_gmm2")
        down = torch.bmm(act.unsqueeze(1), routed.w2[expert_ids]).squeeze(1)
        runtime.record("moe:before_combine")
        return (down.view(*weights.shape, -1) * weights.unsqueeze(-1)).sum(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        routed_out = self._routed(x)
        with runtime.stream("shared_experts_calculation"):
            runtime.wait("moe:before_dispatch")
            gate_up = self.shared.gate_up_proj(x)
            runtime.wait("moe:before_gmm2")
            gate, up = gate_up.chunk(2, dim=-1)
            act = F.silu(gate) * up
            runtime.wait("moe:before_combine")
            shared_out = torch.sigmoid(self.shared.expert_gate(x)) * self.shared.down_proj(act)
            runtime.record("moe:shared_done")
        runtime.wait("moe:shared_done")
        return routed_out + shared_out
