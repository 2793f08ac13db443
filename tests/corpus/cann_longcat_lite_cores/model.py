"""LongCat-Flash-Lite: MoE on the "moe" stream, sub-layer 1 on the main stream, core counts from the config.

Shaped after the decoder layer of cann-recipes-infer
``models/longcat_flash_lite/models/modeling_longcat_flash_lite.py``: the split
(``moe_aic_num``/``moe_aiv_num`` for the MoE side stream, ``main_aic_num``/``main_aiv_num``
for the main stream, 8/16 and 16/32 by default) comes from the model's custom
parameters, the overlap is decode-only, and the layer ends with a three-way add of
residual, sub-layer 1 and MoE output.

Idioms: core_split (counts given as dotted names read at call time),
param_when (``moe_overlap`` decided per call and passed down).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from npudsl import core_limit, keep_output, on_stream


@dataclass
class LiteConfig:
    enable_moe_stream_overlap: bool = True
    moe_aic_num: int = 8
    moe_aiv_num: int = 16
    main_aic_num: int = 16
    main_aiv_num: int = 32


class SwiGLU(nn.Module):
    def __init__(self, hidden: int, inter: int) -> None:
        super().__init__()
        self.up = nn.Linear(hidden, 2 * inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class LiteLayer(nn.Module):
    def __init__(self, cfg: LiteConfig, hidden: int, inter: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.cfg, self.top_k = cfg, top_k
        self.norms = nn.ModuleList(nn.RMSNorm(hidden, eps=1e-6) for _ in range(4))
        self.attn = nn.ModuleList(nn.Linear(hidden, 3 * hidden, bias=False) for _ in range(2))
        self.mlps = nn.ModuleList(SwiGLU(hidden, inter) for _ in range(2))
        self.router = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(hidden, inter) for _ in range(experts))

    def attention(self, i: int, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.attn[i](x).unsqueeze(0).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v).squeeze(0)

    @on_stream("moe", when="moe_overlap")
    @core_limit("self.cfg.moe_aic_num", "self.cfg.moe_aiv_num", when="moe_overlap")
    @keep_output
    def routed_moe(self, hidden_states: torch.Tensor, moe_overlap: bool) -> torch.Tensor:
        weights, ids = self.router(hidden_states).softmax(dim=-1).topk(self.top_k, dim=-1)
        gates = hidden_states.new_zeros(hidden_states.shape[0], len(self.experts)).scatter(-1, ids, weights)
        return sum(expert(hidden_states) * gates[:, e : e + 1] for e, expert in enumerate(self.experts))

    @core_limit("self.cfg.main_aic_num", "self.cfg.main_aiv_num", when="moe_overlap")
    def sub_layer_1(self, hidden_states: torch.Tensor, residual: torch.Tensor, moe_overlap: bool):
        residual = residual + self.mlps[0](hidden_states)
        residual = residual + self.attention(1, self.norms[2](residual))
        return self.mlps[1](self.norms[3](residual)), residual

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool) -> torch.Tensor:
        moe_overlap = self.cfg.enable_moe_stream_overlap and not is_prefill
        residual = hidden_states + self.attention(0, self.norms[0](hidden_states))
        hidden_states = self.norms[1](residual)
        shortcut_mlp_output = self.routed_moe(hidden_states, moe_overlap)
        hidden_states, residual = self.sub_layer_1(hidden_states, residual, moe_overlap)
        return residual + hidden_states + shortcut_mlp_output


class LongcatLiteModel(nn.Module):
    def __init__(self, cfg: LiteConfig, hidden: int, inter: int, experts: int, top_k: int, layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(LiteLayer(cfg, hidden, inter, experts, top_k) for _ in range(layers))

    def forward(self, hidden_states: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        for layer in self.layers:
            hidden_states = layer(hidden_states, is_prefill)
        return hidden_states
