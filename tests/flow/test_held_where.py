"""A private function's parameter is kept only where its callers do not surely read it again (``held_where.py``).

vllm-ascend's DeepSeek-V4 attention hands ``hidden_states`` to ``_mla_prolog``, whose overlap stream reads it; after the
prolog returns (joined), ``forward`` reads it again only in a c4 layer (``if self.compress_ratio == 4:``), through the
indexer's compressor, an ``nn.Linear``. ``_linear`` here is that shape: the side stream reads ``x``, the caller's stream
allocates before the join, and ``by_linear`` reads ``x`` again only under ``if self.kind == 4:``, in ``self.proj(x)``. A
call of an ``nn.Linear`` runs ``F.linear`` on its input (``torch_layer_reads.py``, from torch's sources), so where the
test holds ``x`` lives past the join: the keep is made only where it fails (``self.kind != 4``). ``nn.Dropout`` hands
its input to ``F.dropout`` with the module's mode (in eval: its input back, no kernel), and a test of an attribute a
method other than ``__init__`` stores may change between the call and the test: both keep ``x`` whole. ``by_always``
hands ``x`` to the ``nn.Linear`` on every path, after defining a function (a ``def`` runs no op): ``_always`` keeps
nothing. Every case runs race-checked on every target, both kinds, and equals the math; taking the conditional keep out
races where the test fails.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, kind=4):
        super().__init__()
        self.kind, self.mode = kind, kind
        self.proj = nn.Linear(3, 3, bias=False)
        self.drop = nn.Dropout(0.0)
        with torch.no_grad():
            self.proj.weight.fill_(0.5)

    def set_mode(self, mode):
        self.mode = mode

    @on_stream("side")
    def side(self, h):
        return h * 2

    def _linear(self, x: torch.Tensor) -> torch.Tensor:
        y = self.side(x)
        z = x + 1
        w = z * 3
        return y + w

    def _dropout(self, x: torch.Tensor) -> torch.Tensor:
        y = self.side(x)
        z = x + 1
        w = z * 3
        return y + w

    def _unfixed(self, x: torch.Tensor) -> torch.Tensor:
        y = self.side(x)
        z = x + 1
        w = z * 3
        return y + w

    @on_stream("side")
    def side_too(self, h):
        return h * 5

    def _folded(self, x: torch.Tensor) -> torch.Tensor:
        t = x * 1
        y = self.side(x)
        u = self.side_too(t)
        z = x + 1
        w = z * 3
        return y + u + w

    def by_folded(self, x):
        h = x * 1
        out = self._folded(h)
        if self.kind == 4:
            out = out + self.proj(h)
        return out * 2

    def _always(self, x: torch.Tensor) -> torch.Tensor:
        y = self.side(x)
        z = x + 1
        w = z * 3
        return y + w

    def by_always(self, x):
        h = x * 1
        out = self._always(h)

        def twice(t):
            return t * 2

        return twice(out) + self.proj(h)

    def by_linear(self, x):
        h = x * 1
        out = self._linear(h)
        if self.kind == 4:
            out = out + self.proj(h)
        return out * 2

    def by_dropout(self, x):
        h = x * 1
        out = self._dropout(h)
        if self.kind == 4:
            out = out + self.drop(h)
        return out * 2

    def by_unfixed(self, x):
        h = x * 1
        out = self._unfixed(h)
        if self.mode == 4:
            out = out + self.proj(h)
        return out * 2
""" + caller_source()

_TARGETS = ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"]
_UNLESS = 'if self.kind != 4:\n                runtime.record_stream(x, "side")'


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _want(method: str, x: torch.Tensor, kind: int) -> torch.Tensor:
    out = x * 2 + (x + 1) * 3
    if method == "by_folded":
        out = out + x * 5
    if method == "by_always":
        return out * 2 + 0.5 * x.sum(dim=-1, keepdim=True).expand_as(x)
    if kind == 4 and method == "by_dropout":
        out = out + x
    elif kind == 4:
        out = out + 0.5 * x.sum(dim=-1, keepdim=True).expand_as(x)
    return out * 2


def test_the_keep_is_made_only_where_the_callers_read_it_no_more() -> None:
    assert _UNLESS in method_source(_code(), "_linear")


def test_a_keep_folded_into_an_earlier_call_s_block_keeps_its_own_condition() -> None:
    source = method_source(_code(), "_folded")
    assert _UNLESS in source and 'runtime.record_stream(t, "side")' in source.replace(_UNLESS, "")


def test_no_keep_where_every_caller_hands_it_to_a_linear_after_a_nested_def() -> None:
    assert "record_stream" not in method_source(_code(), "_always")


@pytest.mark.parametrize("method", ["_dropout", "_unfixed"])
def test_no_read_or_a_test_that_may_change_keeps_it_whole(method: str) -> None:
    source = method_source(_code(), method)
    assert 'runtime.record_stream(x, "side")' in source and "!= 4" not in source


@pytest.mark.parametrize("kind", [4, 1])
@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", ["by_always", "by_linear", "by_dropout", "by_unfixed", "by_folded"])
def test_race_free_and_exact(method: str, target: str, kind: int) -> None:
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    trace = trace_graph(_code(target), target, lambda m: m.Caller(method, kind), (x,), eager_first=native)
    torch.testing.assert_close(trace.outputs, _want(method, x, kind))


def test_without_the_conditional_keep_a_window_only_kind_races() -> None:
    code = _code().replace(_UNLESS, "if False:\n                pass")
    assert code != _code()
    x = torch.randn(2, 3)
    trace_graph(code, "portable", lambda m: m.Caller("by_linear", 4), (x,))  # read again after the join: no race
    with pytest.raises(StreamRaceError):
        trace_graph(code, "portable", lambda m: m.Caller("by_linear", 1), (x,))
