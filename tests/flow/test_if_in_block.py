"""A guarded call on a side stream issued in the block of the call before it, inside that call's ``if``
(``hoist_into.py``, ``if_in_block.py``), as vllm-ascend's DeepSeek-V4 indexer updates its key and scale caches: one
switch and one join record, not two of each.

``nested`` writes the scale update's ``if`` right after the key update, inside the key update's ``if``; ``sibling``
writes it after main-stream work, in an ``if`` whose test is the first's and more. Both become one block: the
``if`` inside the ``with``, the join recorded once at its end, no flag of the second call's (on GE, one switch:
``ge_if_block.py``). Each other case keeps two blocks for one reason: the test runs an op (``test_runs_op``,
``nested_op``), it is not the first test and more (``not_implied``), or the main work between reads what the scale
update writes (``reads_written``).

``grouped`` unpacks both caches from one tuple, so the analysis groups them as names that may share memory: the
key update's write of ``keys`` made ``scales`` look like its stream's own, and the scale update, nested in the key
update's block, kept nothing alive for the caller's ``scales`` (a race on main: the caller's stream allocates
while the side stream still writes it; ``stream_made.py``). GE keeps nothing by hand: it plans the memory, and
its write is a functional op taking ``scales`` as an input (``tests/targets/test_ge_kept_writes.py``). Every case
runs under the race checker with the stream on and off and the key update skipped or not, and equals the same
arithmetic on one stream.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, on: bool, empty: bool):
        super().__init__()
        self.on, self.empty = on, empty
        self.register_buffer("keys", torch.zeros(2, 3))
        self.register_buffer("scales", torch.zeros(2, 1))

    @on_stream("side", when="self.on")
    def quant(self, k: torch.Tensor, keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        keys.copy_(k * 2)
        return k * 3, k.sum(-1, keepdim=True)

    @on_stream("side", when="self.on")
    def scale(self, s: torch.Tensor, scales: torch.Tensor) -> None:
        scales.copy_(s)

    def nested(self, x):
        keys, scales = self.keys * 0, self.scales * 0
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, keys)
            if k is not None and s is not None:
                self.scale(s, scales)
        m = x * 3
        n = m + 1
        return n + keys + scales

    def sibling(self, x):
        keys, scales = self.keys * 0, self.scales * 0
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, keys)
        m = x * 3
        if k is not None and s is not None:
            self.scale(s, scales)
        n = m + 1
        return n + keys + scales

    def test_runs_op(self, x):
        keys, scales = self.keys * 0, self.scales * 0
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, keys)
        m = x * 3
        if k is not None and s.numel() > 0:
            self.scale(s, scales)
        n = m + 1
        return n + keys + scales

    def nested_op(self, x):
        keys, scales = self.keys * 0, self.scales * 0
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, keys)
            if s.numel() > 0:
                self.scale(s, scales)
        m = x * 3
        n = m + 1
        return n + keys + scales

    def not_implied(self, x):
        keys, scales = self.keys * 0, self.scales * 0
        k, s = (None if self.empty else x * 1), None
        if k is not None:
            k, s = self.quant(k, keys)
        m = x * 3
        if s is not None:
            self.scale(s, scales)
        n = m + 1
        return n + keys + scales

    def reads_written(self, x):
        keys, scales = self.keys * 0, self.scales * 0
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, keys)
        m = x * 3 + scales
        if k is not None and s is not None:
            self.scale(s, scales)
        n = m + 1
        return n + keys + scales

    def grouped(self, x):
        caches = (x * 0, x[:, :1] * 0)
        keys, scales = caches
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, keys)
            if k is not None and s is not None:
                self.scale(s, scales)
        m = x * 3
        n = m + 1
        return n + keys
""" + caller_source()


def _both(x: torch.Tensor, empty: bool) -> torch.Tensor:
    return x * 3 + 1 if empty else x * 3 + 1 + x * 2 + x.sum(-1, keepdim=True)


_EXPECTED = {
    "nested": _both,
    "sibling": _both,
    "test_runs_op": _both,
    "nested_op": _both,
    "not_implied": _both,
    "reads_written": _both,
    "grouped": lambda x, empty: x * 3 + 1 if empty else x * 3 + 1 + x * 2,
}


def _body(method: str, target: str = "portable") -> str:
    return method_source(transform_source(SOURCE, path="m.py", target=target), method)


@pytest.mark.parametrize("method", ["nested", "sibling"])
def test_one_block(method: str) -> None:
    body = _body(method)
    assert body.count("runtime.stream(") == 1
    assert body.count('runtime.record("m.Model.quant.join")') == 1
    assert "scale_forked" not in body  # the block's condition is the first call's flag
    lines = [line.strip() for line in body.splitlines()]
    at = lines.index("k, s = self.quant(k, keys)")
    assert lines[at + 1 : at + 3] == ["if k is not None and s is not None:", "self.scale(s, scales)"]
    assert lines[at + 3 : at + 5] == ["if quant_forked:", 'runtime.record("m.Model.quant.join")']
    assert lines.index("m = x * 3") > at + 4  # the main work keeps its order, after the block


@pytest.mark.parametrize("method", ["nested", "sibling"])
def test_one_switch_on_ge(method: str) -> None:
    body = _body(method, "ge")  # no join to record: the switch alone (``ge_if_block.py``)
    assert body.count("npu_stream_switch(") == 1
    assert body.index("self.scale(s, scales)") < body.index("m = x * 3")


@pytest.mark.parametrize("method", ["test_runs_op", "nested_op", "not_implied", "reads_written"])
def test_two_blocks(method: str) -> None:
    assert _body(method).count("runtime.stream(") == 2


def test_grouped_input_kept() -> None:
    body = _body("grouped")
    assert body.count("runtime.stream(") == 1
    assert body.index('runtime.record_stream(scales, "side")') < body.index("self.scale(s, scales)")


@pytest.mark.parametrize("target", ["portable", "ge", "cuda"])
@pytest.mark.parametrize("empty", [False, True])
@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", sorted(_EXPECTED))
def test_race_free_and_exact(method: str, on: bool, empty: bool, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, on, empty), (x,), eager_first=target == "cuda")
    torch.testing.assert_close(got, _EXPECTED[method](x, empty))
