"""Two of the calls ``bench.sync_generated vllm_dsv4_dsa_overlap`` calls droppable are needed by callers the run
cannot rule out: the MLA prolog's ``record_stream(slot_mapping)`` and its join before it returns.

vllm-ascend's DeepSeek-V4 attention: the public ``forward`` calls the private ``_prolog``, whose side call scatters
into the window cache at ``slot``; ``forward`` reads the cache after, and in a layer with an indexer runs the
indexer's ``_proj`` on the same stream first, whose join comes later on that stream.

- The keep: ``forward`` does not read ``slot`` after the call; in the corpus the next layer does (a loop three
  public calls up), so there the keep is droppable. ``forward`` is public: a caller outside the run may make
  ``slot`` right before and drop it, and taking the keep out races there.
- The join: in an indexer layer, the indexer's join covers the prolog's work (stream order), so there the join is
  droppable. But the indexer is another object, whose own flag says whether its call runs on the stream at all:
  with that flag off it joins nothing, and taking the prolog's join out races. Nothing in the run ties the two
  objects' flags (the corpus builds both from one argument). CONTRACT section 2 places the join before the function
  returns besides.
"""

from __future__ import annotations

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Inner(nn.Module):
    def __init__(self, on):
        super().__init__()
        self.on = on

    @on_stream("side", when="self.on")
    def _proj(self, h):
        return h * 5

    def forward(self, h):
        w = self._proj(h)
        z = h * 7
        return w + z


class Attn(nn.Module):
    def __init__(self, ratio, inner_on):
        super().__init__()
        self.ratio, self.on = ratio, True
        self.inner = Inner(inner_on)

    @on_stream("side", when="self.on")
    def _scatter(self, h, cache, slot):
        cache.index_copy_(0, slot, h * 2)

    def _prolog(self, h, cache, slot):
        self._scatter(h, cache, slot)
        q = h * 3
        return q + 1

    def forward(self, h, cache, slot):
        q = self._prolog(h, cache, slot)
        t = None
        if self.ratio == 4:
            t = self.inner(h)
        out = q + cache
        return out if t is None else out + t


class Caller(nn.Module):
    def __init__(self, ratio, inner_on):
        super().__init__()
        self.attn = Attn(ratio, inner_on)

    def forward(self, x):
        cache = torch.zeros_like(x)
        slot = torch.arange(x.shape[0]).flip(0) * 1
        return self.attn(x * 1, cache, slot)
"""

KEEP = 'runtime.record_stream(slot, "side")'
JOIN = 'runtime.wait("m.Attn._scatter.join")'


def _generated() -> str:
    return transform_source(SOURCE, path="m.py", target="portable")


def _without(code: str, text: str) -> str:
    """``code`` with the statement spelling ``text`` made a ``pass``."""
    lines = code.splitlines(keepends=True)
    return "".join(line[: len(line) - len(line.lstrip())] + "pass\n" if text in line else line for line in lines)


def _want(x: torch.Tensor, ratio: int) -> torch.Tensor:
    out = x * 3 + 1 + (x * 2).flip(0)
    return out + x * 12 if ratio == 4 else out


def test_the_prolog_keeps_slot_and_joins_before_it_returns() -> None:
    code = _generated()
    assert code.count(KEEP) == 1 and code.count(JOIN) == 1


@pytest.mark.parametrize(("ratio", "inner_on"), [(1, True), (4, True), (4, False)])
def test_race_free_and_exact(ratio: int, inner_on: bool) -> None:
    x = torch.randn(4, 3)
    out = run_checked(_generated(), "portable", lambda m: m.Caller(ratio, inner_on), (x,))
    torch.testing.assert_close(out, _want(x, ratio))


def test_without_the_keep_a_caller_that_drops_slot_races() -> None:
    with pytest.raises(StreamRaceError):
        run_checked(_without(_generated(), KEEP), "portable", lambda m: m.Caller(1, True), (torch.randn(4, 3),))


def test_without_the_join_an_indexer_layer_with_its_stream_on_is_race_free() -> None:
    x = torch.randn(4, 3)
    out = run_checked(_without(_generated(), JOIN), "portable", lambda m: m.Caller(4, True), (x,))
    torch.testing.assert_close(out, _want(x, 4))


def test_without_the_join_an_indexer_layer_with_its_stream_off_races() -> None:
    with pytest.raises(StreamRaceError):
        run_checked(_without(_generated(), JOIN), "portable", lambda m: m.Caller(4, False), (torch.randn(4, 3),))
