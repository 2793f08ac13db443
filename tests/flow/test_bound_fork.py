"""A call given a result only an earlier call on its stream binds, in a sibling ``if``, needs no fork of its own
(``bound_fork.py``): vllm-ascend's DeepSeek-V4 indexer updates its key cache under ``if k is not None:`` and its
scale cache under ``if k is not None and s is not None:``, both on the overlap stream.

``sibling``: the main work between (a matmul-like product and an in-place write of its own result) touches nothing
the scale update reads, so it runs after the key update's fork with no record or wait of its own. Where the main
stream writes in place what it reads (``written``, also through a view: ``view_written``) or rebinds it
(``rebound``), it records its own fork. Each case runs under the race checker, with the stream on and off and the
key update skipped or not, and equals the same arithmetic on one stream. Joined where the key update is, the scale
update records the key update's join event, and one wait joins both (``shared_join.py``); joined apart
(``joined_apart``), it records its own.
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
        self.register_buffer("cache", torch.zeros(2, 3))

    @on_stream("side", when="self.on")
    def quant(self, k: torch.Tensor, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cache.copy_(k * 2)
        return k * 3, k + 1

    @on_stream("side", when="self.on")
    def scales(self, s: torch.Tensor, cache: torch.Tensor, slots: torch.Tensor) -> None:
        cache.copy_(s * slots)

    def sibling(self, x):
        cache, cache2, slots = self.cache * 0, self.cache * 0, x + 2
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, cache)
        q = x * 5
        q.mul_(2)
        if k is not None and s is not None:
            self.scales(s, cache2, slots)
        h = q * 7
        return h + cache + cache2

    def joined_apart(self, x):
        cache, cache2, slots = self.cache * 0, self.cache * 0, x + 2
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, cache)
        q = x * 5
        q.mul_(2)
        if k is not None and s is not None:
            self.scales(s, cache2, slots)
        g = q * 7
        h = g + cache2
        return h + cache

    def written(self, x):
        cache, cache2, slots = self.cache * 0, self.cache * 0, x + 2
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, cache)
        q = x * 5
        slots.mul_(1)
        if k is not None and s is not None:
            self.scales(s, cache2, slots)
        h = q * 14
        return h + cache + cache2

    def view_written(self, x):
        cache, cache2, slots = self.cache * 0, self.cache * 0, x + 2
        v = slots[0]
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, cache)
        q = x * 5
        v.mul_(1)
        if k is not None and s is not None:
            self.scales(s, cache2, slots)
        h = q * 14
        return h + cache + cache2

    def rebound(self, x):
        cache, cache2, slots = self.cache * 0, self.cache * 0, x + 2
        k = None if self.empty else x * 1
        if k is not None:
            k, s = self.quant(k, cache)
        q = x * 5
        slots = slots * 1
        if k is not None and s is not None:
            self.scales(s, cache2, slots)
        h = q * 14
        return h + cache + cache2
""" + caller_source()


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_no_fork_after_the_binders_fork() -> None:
    body = _body("sibling")
    assert "m.Model.scales.fork" not in body
    assert body.count('runtime.wait("m.Model.quant.fork")') == 1


def test_one_join_event_for_both() -> None:
    """The scale update records the key update's join event; the one wait, under the key update's flag, joins
    both (``shared_join.py``). Issued in the key update's block (``hoist_into.py``, ``if_in_block.py``), the two
    share one record, at the block's end."""
    body = _body("sibling")
    assert "m.Model.scales.join" not in body
    assert body.count('runtime.record("m.Model.quant.join")') == 1
    assert body.count('runtime.wait("m.Model.quant.join")') == 1
    assert body.index('runtime.record("m.Model.quant.join")', body.index("self.scales(")) < body.index("h = q * 7")


def test_own_join_event_where_joined_apart() -> None:
    body = _body("joined_apart")
    assert 'runtime.record("m.Model.scales.join")' in body
    assert body.index('runtime.wait("m.Model.scales.join")') < body.index("h = g + cache2")


@pytest.mark.parametrize("method", ["written", "view_written", "rebound"])
def test_own_fork_after_its_inputs_changed(method: str) -> None:
    body = _body(method)
    assert 'runtime.record("m.Model.scales.fork")' in body
    assert 'runtime.wait("m.Model.scales.fork")' in body


@pytest.mark.parametrize("empty", [False, True])
@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", ["sibling", "joined_apart", "written", "view_written", "rebound"])
def test_race_free_and_exact(method: str, on: bool, empty: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    got = run_checked(code, "portable", lambda m: m.Caller(method, on, empty), (x,))
    updated = torch.zeros(2, 3) if empty else x * 2 + (x + 1) * (x + 2)
    torch.testing.assert_close(got, x * 70 + updated)
