"""A private method's join before it returns stays where a later sibling's join on the same stream would cover it.

vllm-ascend's DeepSeek-V4 indexer: ``_cv`` writes the key cache on the overlap stream and joins before it returns;
``forward`` then runs the attention's compressor (a callable of its overlap plan), and ``_select`` projects on the
same stream and joins before the top-k reads the cache. ``bench.sync_generated`` calls ``_cv``'s join droppable:
``_select``'s join comes later on the stream and covers it. Besides CONTRACT section 2 (a call joins before the
function returns), the callables between come from ``forward``'s caller (``forward`` is public): one that reads
the cache, which the run cannot see, races once ``_cv``'s join is taken out. Here ``run`` takes that callable.
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


class Model(nn.Module):
    @on_stream("side")
    def _quant(self, k, cache):
        cache.copy_(k * 2)

    @on_stream("side")
    def _weights(self, h):
        return h * 5

    def run(self, h, cache, plan):
        q = self._cv(h, cache)
        r = plan()
        return self._select(h, q) + r

    def _cv(self, h, cache):
        k = h * 3
        if k is not None:
            self._quant(k, cache)
        q = h + 1
        return q * 2

    def _select(self, h, q):
        w = self._weights(h)
        y = q * 2
        return w + y


class Caller(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Model()

    def forward(self, x):
        cache = torch.zeros_like(x)
        return self.model.run(x * 1, cache, lambda: cache * 1)
"""

JOIN = 'runtime.wait("m.Model._quant.join")'


def _generated() -> str:
    return transform_source(SOURCE, path="m.py", target="portable")


def _want(x: torch.Tensor) -> torch.Tensor:
    return x * 5 + (x + 1) * 4 + x * 6


def test_cv_joins_before_it_returns() -> None:
    assert _generated().count(JOIN) == 1


def test_race_free_and_exact() -> None:
    x = torch.randn(4, 3)
    torch.testing.assert_close(run_checked(_generated(), "portable", lambda m: m.Caller(), (x,)), _want(x))


def test_without_that_join_a_callable_of_the_caller_reading_the_cache_races() -> None:
    code = "".join(
        line[: len(line) - len(line.lstrip())] + "pass\n" if JOIN in line else line
        for line in _generated().splitlines(keepends=True)
    )
    with pytest.raises(StreamRaceError):
        run_checked(code, "portable", lambda m: m.Caller(), (torch.randn(4, 3),))
