"""A micro-batch's result read in a later loop waits for its own call there, not for every call before the loop.

``codegen/lower/flow/item_slots.py``: a call in ``for i in range(n)`` storing ``out[i]``, read as ``out[i]`` in a
later ``for i in range(n)``. Where nothing joins a call before the next one (two pending at once), each call
records the join event of its parity and the read waits for ``out[i]``'s (``slots``); where each call is joined
before the next (it reads ``s``, written in place before the next call), only the last can still run, and the
read of the last item waits (``alone``). Before, both waited for the last call before the second loop (so
micro-batch 0's work waited for micro-batch 1's call). Race-checked and exact for one, two and three
micro-batches; outside the rule (a ``break``, another range) every read waits for the last call, as before.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("comm")
    def dispatch(self, x, scale):
        return x * scale

    def forward(self, hs: list[torch.Tensor], scale: torch.Tensor):
        n = len(hs)
        out: list[torch.Tensor | None] = [None] * n
        ys: list[torch.Tensor | None] = [None] * n
        s = scale * 1
        for i in range(n):
            h = hs[i] + 1
            WRITE
            out[i] = self.dispatch(h, s)
        for i in range(READ):
            ys[i] = out[i] * 3
        return torch.cat(ys)
"""
PAIR = '("m.Model.dispatch.join", "m.Model.dispatch.join.2")'


def _code(write: str = "pass", read: str = "n", target: str = "portable") -> str:
    source = SOURCE.replace("WRITE", write).replace("READ", read)
    return transform_source(source, path="m.py", target=target)


def _lines(code: str) -> list[str]:
    return [line.strip() for line in method_source(code, "forward").splitlines()]


def test_two_pending_calls_each_record_and_wait_for_their_parity() -> None:
    lines = _lines(_code())
    second = lines.index("for i in range(n):", lines.index("for i in range(n):") + 1)
    assert f"runtime.record({PAIR}[i % 2])" in lines[:second]
    assert lines[second + 1 : second + 3] == ["if dispatch_forked:", f"runtime.wait({PAIR}[i % 2])"]
    assert not [line for line in lines[:second] if line.startswith("runtime.wait(") and "join" in line]
    assert not [line for line in lines[second + 4 :] if line.startswith("runtime.wait(")]  # the loop joined all


def test_calls_joined_one_by_one_wait_for_the_last_item_only() -> None:
    lines = _lines(_code(write="s.add_(1)"))
    second = lines.index("for i in range(n):", lines.index("for i in range(n):") + 1)
    assert 'runtime.record("m.Model.dispatch.join")' in lines[:second]
    assert lines[second + 1 : second + 3] == [
        "if dispatch_forked and i == n - 1:",
        'runtime.wait("m.Model.dispatch.join")',
    ]
    assert "join.2" not in "\n".join(lines)


@pytest.mark.parametrize("read", ["len(ys)", "n - 1"])
def test_another_range_waits_for_every_call(read: str) -> None:
    """The read loop may read an item no call stored: every read waits for the last call, as before."""
    lines = _lines(_code(read=read))
    loop = lines.index(f"for i in range({read}):")
    assert lines[loop + 1 : loop + 3] == ["if dispatch_forked:", 'runtime.wait("m.Model.dispatch.join")']
    assert "join.2" not in "\n".join(lines)


def test_a_loop_that_may_stop_early_is_not_slotted() -> None:
    code = transform_source(
        SOURCE.replace("WRITE", "if h.shape[0] > 9:\n                break").replace("READ", "n"),
        path="m.py",
        target="portable",
    )
    assert "join.2" not in code and "% 2" not in code


def _want(hs: list[torch.Tensor], scale: torch.Tensor, write: bool) -> torch.Tensor:
    scale, ys = scale.clone(), []
    for h in hs:
        if write:
            scale.add_(1)
        ys.append((h + 1) * scale * 3)
    return torch.cat(ys)


@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("write", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
def test_race_free_and_exact(target: str, write: bool, count: int) -> None:
    hs, scale = [torch.randn(2, 3) for _ in range(count)], torch.randn(3)
    code = _code(write="s.add_(1)" if write else "pass", target=target)
    native = target == "cuda"  # native events are made at their first eager use
    got = trace_graph(code, target, lambda m: m.Model(), (hs, scale), eager_first=native).outputs
    torch.testing.assert_close(got, _want(hs, scale, write))


def test_each_slot_is_needed() -> None:
    """Waiting for micro-batch 0's slot before micro-batch 1's read races: the slot read is the one its call
    recorded."""
    wait = f"runtime.wait({PAIR}[i % 2])"
    code = _code()
    assert wait in code
    hs, scale = [torch.randn(2, 3), torch.randn(2, 3)], torch.randn(3)
    with pytest.raises(StreamRaceError):
        trace_graph(code.replace(wait, f"runtime.wait({PAIR}[0])"), "portable", lambda m: m.Model(), (hs, scale))
