"""The GE stand-in ties ``torchair.ops.wait([t])`` (and ``npu_wait_tensor``'s dependency) to the value ``t`` holds
where the wait stands: after an in-place write of ``t``'s memory (through ``t`` or a view of it), to that write, as
real torchair does once functionalization has made the write a functional op whose result the wait takes (the
first test reads that graph). It used to tie the wait to ``t``'s first producer, so a wait placed after the write
raced in the checker. A write issued after the wait, a write of another tensor, and work issued after the write
are still not ordered by it."""

from __future__ import annotations

import operator

import pytest
import torch

from npudsl.errors import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph

SOURCE = """\
import torch
import torchair


class Writes(torch.nn.Module):
    def forward(self, x, cache, other):
        with torchair.scope.npu_stream_switch("side", 0):
            z = x * 2
            WRITE
        WAIT
        return cache * 2 + z + other
"""
WRITES = {
    "add_": "cache.add_(x)",
    "copy_": "cache.copy_(x + 1)",
    "setitem": "cache[1] = x[0]",
    "view": "cache[0:2].mul_(3)",
    "index_copy_": "cache.index_copy_(0, torch.tensor([2]), x[:1])",
}
WAIT = "torchair.ops.wait([cache])"


def _source(write: str, wait: str = WAIT) -> str:
    return SOURCE.replace("WRITE", write).replace("WAIT", wait)


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.arange(3.0), torch.ones(3), torch.zeros(3)


def _run(source: str) -> torch.Tensor:
    return run_checked(source, "ge", lambda m: m.Writes(), _inputs(), data_edges="explicit")


def test_functionalization_hands_the_wait_the_written_value() -> None:
    """The premise, on the graph aot_autograd makes (what torchair compiles): the wait takes the write's result."""
    trace = trace_graph(_source(WRITES["add_"]), "ge", lambda m: m.Writes(), _inputs())
    graph = trace.aot[0].graph
    (wait,) = (n for n in graph.nodes if "standin_air.wait" in str(n.target))
    (written,) = wait.args[0]
    assert written.target is torch.ops.aten.add.Tensor
    assert written.op != "placeholder"


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_wait_after_the_write_orders_the_write_and_the_work_before_it(write: str) -> None:
    expected = 2 * _eager(write) + 2 * _inputs()[0]
    assert torch.equal(_run(_source(write)), expected)


def test_a_wait_for_a_view_orders_a_write_of_its_buffer() -> None:
    source = _source(WRITES["add_"], "torchair.ops.wait([cache[0:2]])")
    assert torch.equal(_run(source), 2 * _eager(WRITES["add_"]) + 2 * _inputs()[0])


def test_npu_wait_tensor_orders_after_the_write_of_its_dependency() -> None:
    source = _source(WRITES["add_"], "torchair.scope.npu_wait_tensor(other, cache)")
    source = source.replace("return cache * 2 + z + other", "return other + z")
    assert torch.equal(
        run_checked(source, "ge", lambda m: m.Writes(), _inputs(), data_edges="explicit"), 2 * _inputs()[0]
    )


def test_a_write_after_the_wait_races() -> None:
    source = _source("", "").replace(
        "    def forward(self, x, cache, other):\n",
        "    def forward(self, x, cache, other):\n        torchair.ops.wait([cache])\n",
    )
    source = source.replace("            z = x * 2\n", "            z = x * 2\n            cache.add_(x)\n")
    with pytest.raises(StreamRaceError, match="tensor 'cache' written in place on stream 'side'"):
        _run(source)


def test_a_write_of_another_tensor_does_not_order_the_waited_one() -> None:
    source = _source("other.add_(x)", "torchair.ops.wait([cache])")
    with pytest.raises(StreamRaceError, match="tensor 'other' written in place on stream 'side'"):
        _run(source)


def test_work_issued_after_the_write_is_not_ordered_by_it() -> None:
    source = _source(WRITES["add_"]).replace(
        "            z = x * 2\n            cache.add_(x)\n", "            cache.add_(x)\n            z = x * 2\n"
    )
    with pytest.raises(StreamRaceError, match="tensor 'z' made on stream 'side'"):
        _run(source)


def test_an_in_place_change_of_metadata_is_no_write() -> None:
    """``unsqueeze_`` (ATen's ``inplace_view``) becomes a view op after functionalization, which GE may fold into
    its readers: a wait after it orders after the tensor's producer, not after the work issued before it."""
    source = SOURCE.replace(
        "            z = x * 2\n            WRITE\n",
        "            c = x + 1\n            z = x * 2\n            c.unsqueeze_(0)\n",
    )
    source = source.replace("WAIT", "torchair.ops.wait([c])").replace("return cache * 2 + z + other", "return c + z")
    with pytest.raises(StreamRaceError, match="tensor 'z' made on stream 'side'"):
        _run(source)


def _eager(write: str) -> torch.Tensor:
    x, cache, _ = _inputs()
    exec(write, {"torch": torch, "x": x, "cache": cache, "operator": operator})  # noqa: S102 (a test's own text)
    return cache
