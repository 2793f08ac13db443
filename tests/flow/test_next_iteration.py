"""A call last in a ``for i in range(n)`` body, joined right after the loop, keeps its inputs only for a next
iteration (``next_iteration.py``).

vllm_qwen3_dbo's dispatch and combine end their micro-batch loops, and the function waits for them right after:
after the last micro-batch nothing can reuse their inputs' memory before the wait. ``h`` here is rebound by the
next iteration (its memory may go to the next ``xs[i] + 1`` while the side stream reads it), so it is kept where
another iteration follows: ``side_again = i + 1 < n``, then ``record_stream`` under it. Where work runs between the
loop and the join (``h = None; z = x * 3``), the call is not last in its body, or the count is not a name bound
by ``len(...)`` (``range(len(xs))``), the keep stays as it was. Race-free and exact on four targets; the keep
left out after the last iteration although work follows the loop races.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import TARGETS, generated, sync_counts

from codegen.lower.flow import next_iteration
from npudsl import StreamRaceError

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def last_in_loop(self, x):
        xs = list(x.chunk(2))
        n = len(xs)
        outs = [None] * n
        for i in range(n):
            h = xs[i] + 1
            outs[i] = self.side(h)
        return torch.cat(outs)

    def work_after_loop(self, x):
        xs = list(x.chunk(2))
        n = len(xs)
        outs = [None] * n
        for i in range(n):
            h = xs[i] + 1
            outs[i] = self.side(h)
        h = None
        z = x * 3
        return torch.cat(outs) + z

    def not_last(self, x):
        xs = list(x.chunk(2))
        n = len(xs)
        outs = [None] * n
        for i in range(n):
            h = xs[i] + 1
            outs[i] = self.side(h)
            xs[i] = xs[i] * 1
        return torch.cat(outs)

    def two_calls_last(self, x):
        xs = list(x.chunk(2))
        n = len(xs)
        outs = [None] * n
        more = [None] * n
        for i in range(n):
            h = xs[i] + 1
            g = xs[i] * 3
            outs[i] = self.side(h)
            more[i] = self.side(g)
        return torch.cat(outs) + torch.cat(more)

    def counted_by_len(self, x):
        xs = list(x.chunk(2))
        outs = [None] * len(xs)
        for i in range(len(xs)):
            h = xs[i] + 1
            outs[i] = self.side(h)
        return torch.cat(outs)
""" + caller_source()

_METHODS = ["last_in_loop", "work_after_loop", "not_last", "two_calls_last", "counted_by_len"]


def _body(method: str) -> str:
    return method_source(generated(SOURCE), method)


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(4, 3)
    want = (x + 1) * 2 + (x * 3 if method == "work_after_loop" else x * 3 * 2 if method == "two_calls_last" else 0)
    return sync_counts(generated(SOURCE, target), target, method, x, want)


def test_kept_only_where_another_iteration_follows() -> None:
    body = _body("last_in_loop")
    assert "side_again = i + 1 < n" in body
    assert body.index("side_again = i + 1 < n") < body.index("runtime.record_stream(h")
    assert "if side_again:" in body


@pytest.mark.parametrize("method", ["work_after_loop", "not_last", "counted_by_len"])
def test_kept_every_iteration_otherwise(method: str) -> None:
    body = _body(method)
    assert "_again" not in body and 'runtime.record_stream(h, "side")' in body


def test_the_second_of_two_calls_keeps_only_for_a_next_iteration() -> None:
    """``more[i] = self.side(g)`` after ``outs[i] = self.side(h)``, a flag set between them (so no shared
    ``with``): ``h`` is kept every iteration (the second call runs after it), ``g`` only where another follows."""
    body = _body("two_calls_last")
    assert "side_again = i + 1 < n" in body
    assert body.index('runtime.record_stream(h, "side")') < body.index("side_again") < body.index("record_stream(g")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", _METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] == (4 if method == "two_calls_last" else 2)


def test_sync_calls() -> None:
    """Two iterations: a fork each, one keep (the first iteration's), one join record (the last iteration's: the
    only wait reads it, after the loop), one wait after the loop."""
    assert dict(_sync("last_in_loop", "portable")) == {"switch": 2, "record": 3, "wait": 3, "record_stream": 1}
    assert dict(_sync("counted_by_len", "portable")) == {"switch": 2, "record": 4, "wait": 3, "record_stream": 2}


def test_no_keep_after_the_last_iteration_races_where_work_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Taken for joined right after the loop although ``h = None; z = x * 3`` runs first: the last ``h``'s memory
    goes to ``z`` while the side stream still reads it."""
    monkeypatch.setattr(next_iteration, "_joined_before", lambda *_: True)
    with pytest.raises(StreamRaceError):
        _sync("work_after_loop", "portable")
