"""A private method's first side call keeps its fork where a sibling's fork ran only on some paths before it.

vllm-ascend's DeepSeek-V4 indexer: its public ``forward`` calls ``_cv_compute_query_and_update_cache``, which forks
the overlap stream only ``if kv is not None`` (the compressor made rows), then ``_select_topk``, whose
``self._weights_proj(hidden_states)`` forks again. Where ``kv`` is not None the second fork is redundant (its stream
waited after the sibling's fork, and nothing on the caller's stream wrote ``hidden_states`` since:
``bench.sync_generated`` calls it droppable, since the bench's batch compresses rows). Where ``kv`` is None nothing
ordered the stream after the caller's work, and a caller outside the run (``forward`` is public) may have made
``hidden_states`` right before: taking the fork out races there. ``_select_topk`` cannot tell the two paths apart
(the fact is a local of its sibling, and no parameter may be added), so the fork stays on every path.
``_cv`` and ``_select`` here are that shape (the side call writes a cache in place, which the caller reads after
``_cv`` joined): ``k`` is empty for a batch of fewer than four rows. Where the sibling's test compares identities
(``kv is not None``, as upstream's), its ``if`` goes inside a block forked before it, and the fork here goes
(``sibling_fork.py``, ``test_sibling_fork.py``); this test runs an op (``k.numel() > 0``), which the caller's stream
must run before the switch, so the sibling forks on some paths only and the fork stays.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import generated

from npudsl import StreamRaceError
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def _quant(self, k, cache):
        cache[: k.shape[0]].copy_(k * 2)

    @on_stream("side")
    def _weights(self, h):
        return h * 5

    def run(self, h):
        cache = torch.zeros_like(h)
        q = self._cv(h, cache)
        return self._select(h, q) + cache

    def _cv(self, h, cache):
        k = h[: h.shape[0] // 4 * 4] * 3
        if k.numel() > 0:
            self._quant(k, cache)
        return h + 1

    def _select(self, h, q):
        w = self._weights(h)
        y = q * 2
        return w + y
""" + caller_source()

FORK = "Model._weights.fork"


def _unforked(code: str) -> str:
    """``code`` without ``_select``'s fork: its record and its wait."""
    kept = [line for line in code.splitlines(keepends=True) if FORK not in line]
    return "".join(kept)


def _want(x: torch.Tensor) -> torch.Tensor:
    cache = torch.zeros_like(x)
    rows = x.shape[0] // 4 * 4
    cache[:rows] = x[:rows] * 6
    return x * 5 + (x + 1) * 2 + cache


def test_the_weights_call_forks_on_every_path() -> None:
    source = method_source(generated(SOURCE), "_select")
    assert source.count(FORK) == 2  # its record, and its stream's wait


@pytest.mark.parametrize("rows", [8, 3])
def test_race_free_and_exact(rows: int) -> None:
    x = torch.randn(rows, 3)
    trace = trace_graph(generated(SOURCE), "portable", lambda m: m.Caller("run"), (x,))
    torch.testing.assert_close(trace.outputs, _want(x))


def test_without_it_the_path_where_the_sibling_forked_is_race_free() -> None:
    code = _unforked(generated(SOURCE))
    assert FORK not in method_source(code, "_select")
    x = torch.randn(8, 3)
    trace = trace_graph(code, "portable", lambda m: m.Caller("run"), (x,))
    torch.testing.assert_close(trace.outputs, _want(x))


def test_without_it_the_path_where_the_sibling_did_not_fork_races() -> None:
    with pytest.raises(StreamRaceError):
        trace_graph(_unforked(generated(SOURCE)), "portable", lambda m: m.Caller("run"), (torch.randn(3, 3),))
