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

import functools
from contextlib import nullcontext

import torch
from torch import nn
from torch.nn import functional as F

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.npu.Event] = {}


def _event(table: dict[str, torch.npu.Event], tag: str) -> torch.npu.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.npu.Event()
    return table[tag]


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.npu.is_available():
        _stream("shared", 0)
        _SHARED_EXPERT_FORK()
        _SHARED_EXPERT_JOIN()


def _record_stream(value, stream, objects=True) -> None:
    """``record_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."""
    if isinstance(value, torch.Tensor):
        value.record_stream(stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            _record_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            _record_stream(item, stream, False)


_SHARED_EXPERT_FORK = functools.partial(_event, _EVENTS, "moe_decoder.SharedExpert.forward.fork")
_SHARED_EXPERT_JOIN = functools.partial(_event, _EVENTS, "moe_decoder.SharedExpert.forward.join")


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
        _create_streams()

    def forward(self, x):
        h = x + self.mix(self.attn_norm(x))
        y = self.mlp_norm(h)
        if self.shared.multistream:
            _SHARED_EXPERT_FORK().record()
        with torch.npu.stream(_stream("shared", 0)) if self.shared.multistream else nullcontext():
            if self.shared.multistream:
                torch.npu.current_stream().wait_event(_SHARED_EXPERT_FORK())
                _record_stream(y, _stream("shared"))
            shared = self.shared(y)
            if self.shared.multistream:
                _SHARED_EXPERT_JOIN().record()
        routed = self.experts(y)
        if self.shared.multistream:
            torch.npu.current_stream().wait_event(_SHARED_EXPERT_JOIN())
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
