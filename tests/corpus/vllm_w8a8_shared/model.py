"""DeepSeek layers with a W8A8 shared expert whose quantization and projections run on "moe_secondary".

Shaped after the torchair W8A8 path of vllm-ascend: ``TorchairAscendFusedMoE.forward``
(``vllm_ascend/torchair/ops/torchair_fused_moe.py``) quantizes the hidden states for
the shared expert on the side stream, the fused experts' ``apply``
(``vllm_ascend/torchair/quantization/torchair_w8a8_dynamic.py``) runs the shared
gate/up projection there with the pre-quantized
input and its per-token scale, then the activation (which requantizes) and the down
projection. The first layer is dense (DeepSeek's ``first_k_dense_replace``): it
returns the shared MLP's output alone.

Idioms: one_line (``if c: y = self.f(x)``, ``y = self.f(x); z = g(y)``, ``if c: return y``),
optional_star_static (a ``@staticmethod`` stream function, a stream method taking
``*args``, ``pertoken_scale=`` as an optional argument), container_returns (tuples).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import keep_output, on_stream

from .quant import W8A8Linear, dynamic_quant


class SharedExperts(nn.Module):
    def __init__(self, hidden: int, inter: int, multistream: bool) -> None:
        super().__init__()
        self.multistream = multistream
        self.gate_up_proj = W8A8Linear(hidden, 2 * inter)
        self.down_proj = W8A8Linear(inter, hidden)

    @on_stream("moe_secondary", when="self.multistream")
    @keep_output
    def gate_up_side(self, *args: torch.Tensor) -> torch.Tensor:
        return self.gate_up_proj(*args)

    @on_stream("moe_secondary", when="self.multistream")
    @keep_output
    def act_side(self, gate_up: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        gate, up = gate_up.chunk(2, dim=-1)
        return dynamic_quant(F.silu(gate) * up)

    @on_stream("moe_secondary", when="self.multistream")
    @keep_output
    def down_side(self, x: torch.Tensor, pertoken_scale: torch.Tensor | None = None) -> torch.Tensor:
        return self.down_proj(x, pertoken_scale=pertoken_scale)


class W8A8Layer(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, dense: bool, multistream: bool) -> None:
        super().__init__()
        self.dense, self.top_k, self.multistream = dense, top_k, multistream
        self.shared_experts = SharedExperts(hidden, inter, multistream)
        if not dense:
            self.gate = nn.Linear(hidden, experts, bias=False)
            self.w13 = nn.Parameter(torch.randn(experts, hidden, 2 * inter) * hidden**-0.5)
            self.w2 = nn.Parameter(torch.randn(experts, inter, hidden) * inter**-0.5)

    @staticmethod
    @on_stream("moe_secondary", when="enabled")
    @keep_output
    def quant_for_share(hidden_states: torch.Tensor, enabled: bool) -> tuple[torch.Tensor, torch.Tensor]:
        return dynamic_quant(hidden_states)

    def routed(self, hidden_states: torch.Tensor) -> torch.Tensor:
        weights, ids = self.gate(hidden_states).softmax(dim=-1).topk(self.top_k, dim=-1)
        mask = hidden_states.new_zeros(hidden_states.shape[0], self.w13.shape[0]).scatter(-1, ids, weights)
        gate, up = torch.einsum("th,ehi->eti", hidden_states, self.w13).chunk(2, dim=-1)
        return torch.einsum("eti,eih,te->th", F.silu(gate) * up, self.w2, mask)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        quantized_x_for_share = dynamic_scale_for_share = None
        if self.multistream: quantized_x_for_share, dynamic_scale_for_share = self.quant_for_share(hidden_states, True)
        if quantized_x_for_share is None:
            quantized_x_for_share, dynamic_scale_for_share = dynamic_quant(hidden_states)
        shared_gate_up = self.shared_experts.gate_up_side(quantized_x_for_share, dynamic_scale_for_share)
        shared_act, swiglu_out_scale = self.shared_experts.act_side(shared_gate_up); swiglu_out_scale = swiglu_out_scale.squeeze(-1)
        shared_output = self.shared_experts.down_side(shared_act, pertoken_scale=swiglu_out_scale)
        if self.dense: return shared_output
        return self.routed(hidden_states) + shared_output


class W8A8Model(nn.Module):
    def __init__(self, hidden: int, inter: int, experts: int, top_k: int, multistream: bool = True) -> None:
        super().__init__()
        self.layers = nn.ModuleList(W8A8Layer(hidden, inter, experts, top_k, i == 0, multistream) for i in range(2))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            hidden_states = hidden_states + layer(F.rms_norm(hidden_states, (hidden_states.shape[-1],)))
        return hidden_states
