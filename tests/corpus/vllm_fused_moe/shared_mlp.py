"""The shared expert of a DeepSeek MoE layer, runnable whole or in three phases on a side stream.

Shaped after ``TorchairDeepseekV2MLP`` (vllm-ascend
``vllm_ascend/torchair/models/torchair_deepseek_v2.py``) and the shared-expert
phases of ``torchair_fused_experts_with_mc2`` (``vllm_ascend/torchair/ops/torchair_fused_moe.py``):
the gate/up projection runs on the "moe_secondary" stream while tokens are
dispatched, the activation after the dispatch, the down projection while the
routed results are combined. As in vLLM, a projection returns ``(output, bias)``
with ``bias=None``, so two of the phases return a tuple holding a non-tensor.

Idioms: phased_shared (three side methods, called from ``fused_moe.py``),
container_returns (``@keep_output`` on tuples with ``None``).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream


class ReplicatedLinear(nn.Module):
    """A bias-free projection returning ``(output, None)`` like vLLM's linear layers."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * in_features**-0.5)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return F.linear(x, self.weight), None


class SharedMLP(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.gate_up_proj = ReplicatedLinear(hidden, 2 * inter)
        self.down_proj = ReplicatedLinear(inter, hidden)

    @staticmethod
    def act_fn(gate_up: torch.Tensor) -> torch.Tensor:
        gate, up = gate_up.chunk(2, dim=-1)
        return F.silu(gate) * up

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The whole expert on the caller's stream (prefill, or overlap switched off)."""
        gate_up, _ = self.gate_up_proj(x)
        out, _ = self.down_proj(self.act_fn(gate_up))
        return out

    @on_stream("moe_secondary")
    @keep_output
    def gate_up_phase(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.gate_up_proj(hidden_states)

    @on_stream("moe_secondary")
    @keep_output
    def act_phase(self, gate_up: torch.Tensor) -> torch.Tensor:
        return self.act_fn(gate_up)

    @on_stream("moe_secondary")
    @keep_output
    def down_phase(self, act: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.down_proj(act)
