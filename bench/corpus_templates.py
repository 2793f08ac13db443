"""Source templates of the benchmark corpus (``str.format`` fields: n, hidden, inter, heads, experts, top_k, prio)."""

from __future__ import annotations

__all__ = ["CALLER", "CALLER_IMPORT", "DECORATED", "PLAIN_BLOCKS", "PLAIN_HEADER"]

PLAIN_HEADER = '''"""Generated model code for the transform benchmark."""

import math

import torch
from torch import nn
from torch.nn import functional as F
'''

_ATTENTION = '''class Attention{n}(nn.Module):
    """Multi-head self-attention with rotary-free projections."""

    def __init__(self, hidden: int = {hidden}, heads: int = {heads}) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = nn.Linear(hidden, hidden, bias=False)
        self.scale = 1.0 / math.sqrt(self.head_dim)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, _ = x.shape
        return x.view(batch, tokens, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = self.split(q), self.split(k), self.split(v)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(x.shape)
        return self.out(out)'''

_MLP = """class GatedMLP{n}(nn.Module):
    # SwiGLU feed-forward, as in most decoder-only models
    def __init__(self, hidden: int = {hidden}, inter: int = {inter}) -> None:
        super().__init__()
        self.gate = nn.Linear(hidden, inter, bias=False)
        self.up = nn.Linear(hidden, inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


def init_mlp_{n}(module: GatedMLP{n}, std: float = 0.02) -> None:
    for layer in (module.gate, module.up, module.down):
        nn.init.normal_(layer.weight, mean=0.0, std=std)"""

_NORM = """class RMSNorm{n}(nn.Module):
    def __init__(self, hidden: int = {hidden}, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.float().pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(self.weight.dtype)


def rotate_half_{n}(x: torch.Tensor) -> torch.Tensor:
    first, second = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-second, first), dim=-1)"""

_MOE = '''class Router{n}(nn.Module):
    """Top-{top_k} of {experts} experts, softmax-normalized."""

    def __init__(self, hidden: int = {hidden}, experts: int = {experts}, top_k: int = {top_k}) -> None:
        super().__init__()
        self.top_k = top_k
        self.proj = nn.Linear(hidden, experts, bias=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.proj(x).softmax(dim=-1)
        weights, chosen = scores.topk(self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights, chosen


class DenseExperts{n}(nn.Module):
    def __init__(self, hidden: int = {hidden}, inter: int = {inter}, experts: int = {experts}) -> None:
        super().__init__()
        self.w_in = nn.Parameter(torch.empty(experts, hidden, inter))
        self.w_out = nn.Parameter(torch.empty(experts, inter, hidden))
        nn.init.normal_(self.w_in, std=hidden**-0.5)
        nn.init.normal_(self.w_out, std=inter**-0.5)

    def forward(self, x: torch.Tensor, weights: torch.Tensor, chosen: torch.Tensor) -> torch.Tensor:
        mask = torch.zeros(x.shape[0], self.w_in.shape[0], dtype=x.dtype, device=x.device)
        mask = mask.scatter(-1, chosen, weights)
        hidden = F.silu(torch.einsum("th,ehi->tei", x, self.w_in))
        return torch.einsum("teh,te->th", torch.einsum("tei,eih->teh", hidden, self.w_out), mask)'''

PLAIN_BLOCKS = (_ATTENTION, _MLP, _NORM, _MOE)

DECORATED = '''from npudsl import after, core_limit, keep_output, on_stream, records


@on_stream("shared", {prio}, when="self.multistream")
@core_limit(4, 8)
@keep_output
class SharedExpert{n}(nn.Module):
    def __init__(self, hidden: int = {hidden}, inter: int = {inter}, multistream: bool = True) -> None:
        super().__init__()
        self.multistream = multistream
        self.gate_up = nn.Linear(hidden, 2 * inter, bias=False)
        self.down = nn.Linear(inter, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class OverlapBlock{n}(nn.Module):
    """The shared expert overlaps the router; a side branch overlaps the main projection."""

    def __init__(self, hidden: int = {hidden}, inter: int = {inter}) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.shared = SharedExpert{n}(hidden, inter)
        self.router = nn.Linear(hidden, {experts}, bias=False)
        self.side_proj = nn.Linear(hidden, hidden)
        self.main_proj = nn.Linear(hidden, hidden)

    @records("normed")
    def prepare(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)

    @on_stream("side", sync="manual")
    @after("normed")
    @records("side_done")
    @core_limit(4, 8)
    @keep_output
    def side_branch(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.side_proj(x))

    @core_limit(16, 32)
    def main_branch(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.main_proj(x))

    @after("side_done")
    def combine(self, main: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
        return main + side

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.prepare(x)
        side = self.side_branch(y)
        shared = self.shared(y)
        logits = self.router(y).softmax(dim=-1)
        main = self.main_branch(y) * logits.max(dim=-1, keepdim=True).values
        out = self.combine(main, side)
        return out + shared'''

CALLER_IMPORT = "\nfrom models.block_{src:04d} import SharedExpert{src}\n"

CALLER = '''class SharedUser{n}(nn.Module):
    """Calls a shared expert decorated in another file of the run."""

    def __init__(self, hidden: int = {hidden}, inter: int = {inter}) -> None:
        super().__init__()
        self.expert = SharedExpert{src}(hidden, inter)
        self.proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shared = self.expert(x)
        h = self.proj(x)
        return h + shared
'''
