"""A later call of one callee in a block records a join event of its own, so the first call's join waits for it
alone.

cann-recipes-infer's DeepSeek-R1 prefill runs micro-batch 0's combine, then micro-batch 1's, on one side stream,
then reads micro-batch 0's result while micro-batch 1's combine still runs (the ``cann_r1_microbatch`` corpus
entry). With one join event per callee, the second call's record replaced the first's: the read of the first
result waited for both, and the second call overlapped nothing. Calls of one callee in two branches of an
``if`` keep the callee's event (one of them runs), as do calls whose results are read together (one join serves
both). Race-checked on every path, exact, sync
calls counted (the same number as with one event: the record and the wait each call had).
"""

from __future__ import annotations

import pytest
import torch

from bench.sync_count import count_graph, total
from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


@on_stream("comm")
def combine(x):
    return x * 2


class Model(nn.Module):
    def __init__(self, branch):
        super().__init__()
        self.branch = branch

    def forward(self, x):
        a = x + 1
        b = x + 2
        if self.branch is None:
            return self.both(a, b, x)
        if self.branch == "together":
            return self.together(a, b, x)
        return self.either(a, b, x)

    def both(self, a, b, x):
        ya = combine(a)
        yb = combine(b)
        za = ya + 1
        w = x * 3
        return za + w + yb

    def together(self, a, b, x):
        ya = combine(a)
        yb = combine(b)
        w = x * 3
        return ya + yb + w

    def either(self, a, b, x):
        if self.branch:
            y = combine(a)
        else:
            y = combine(b)
        w = x * 3
        return y + w
"""

CALLS_BOTH = 8  # one fork, one block on "comm" for both calls, a join record and a wait for each
CALLS_EITHER = 6  # fork, switch, wait, keep the input, join record, wait: on the path that ran
CALLS_TOGETHER = 7  # one fork and block for both calls, keep each input, one join record after both, one wait


def _body(code: str, name: str) -> str:
    return code.split(f"def {name}(")[1].split("\n    def ")[0]


def _want(branch: bool | str | None, x: torch.Tensor) -> torch.Tensor:
    if branch is None:
        return (x + 1) * 2 + 1 + x * 3 + (x + 2) * 2
    if branch == "together":
        return (x + 1) * 2 + (x + 2) * 2 + x * 3
    return ((x + 1) if branch else (x + 2)) * 2 + x * 3


def _run(branch: bool | str | None) -> tuple[torch.Tensor, int]:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(3, 4)
    trace = trace_graph(code, "portable", lambda m: m.Model(branch), (x,), name=f"own_{branch}")
    want = _want(branch, x)
    torch.testing.assert_close(trace.outputs, want)
    return trace.outputs, total(count_graph(trace.dynamo[0]))


def test_the_first_result_waits_for_the_first_call_only() -> None:
    body = _body(transform_source(SOURCE, path="m.py", target="portable"), "both")
    first, second = body.index('runtime.record("m.combine.join")'), body.index('runtime.record("m.combine.join.2")')
    assert first < second < body.index('runtime.wait("m.combine.join")') < body.index("za = ya + 1")
    assert body.index("w = x * 3") < body.index('runtime.wait("m.combine.join.2")')  # the second call overlaps it
    _, calls = _run(None)
    assert calls == CALLS_BOTH


def test_results_read_together_keep_one_event_and_one_join() -> None:
    body = _body(transform_source(SOURCE, path="m.py", target="portable"), "together")
    assert "combine.join.2" not in body and body.count('runtime.wait("m.combine.join")') == 1
    _, calls = _run("together")
    assert calls == CALLS_TOGETHER


@pytest.mark.parametrize("branch", [True, False])
def test_calls_in_two_branches_keep_the_callees_event(branch: bool) -> None:
    body = _body(transform_source(SOURCE, path="m.py", target="portable"), "either")
    assert body.count('runtime.record("m.combine.join")') == 2 and "combine.join.2" not in body
    _, calls = _run(branch)
    assert calls == CALLS_EITHER
