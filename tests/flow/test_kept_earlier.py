"""An input an earlier call on the same stream kept alive wherever a later call runs is kept once (``kept_earlier.py``).

vllm-ascend's DeepSeek-V4 indexer keeps ``slots`` for the overlap stream at its key update (``if k is not None:``),
then at its scale update, given the key update's ``s`` (``if k is not None and s is not None:``), again. One
``record_stream`` covers every later read of the tensor on that stream. ``bound``: the later call is given a
result only the earlier binds; ``dominated`` and ``plain``: it stands in an ``if`` after the earlier call, given
its result or not. Where the name is rebound between (``rebound``), the later call runs under another guard
(``other_guard``) or in a sibling ``if`` it may reach without the earlier call (``sibling``), it keeps its own, and
taking that keep out races. Every case runs under the race checker on every path, and equals one stream's result.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, empty=False, on=True, wide=True, other=True):
        super().__init__()
        self.empty, self.on, self.wide, self.other = empty, on, wide, other

    @on_stream("side", when="self.on")
    def quant(self, k, slots):
        return k * 2, k.sum(dim=-1, keepdim=True) + slots

    @on_stream("side", when="self.on")
    def scales(self, s, slots):
        return s * 3 + slots

    @on_stream("side", when="self.on")
    def project(self, h):
        return h - 1

    @on_stream("side", when="self.other")
    def other_project(self, h):
        return h - 1

    def bound(self, x):
        k = x + 1
        if self.empty:
            k = None
        slots = x * 2
        out = x
        if k is not None:
            k, s = self.quant(k, slots)
        q = x * 3
        if k is not None and s is not None:
            out = self.scales(s, slots)
        r = x - 1
        return q + out + r

    def dominated(self, x):
        slots = x * 2
        k, s = self.quant(x, slots)
        q = x * 3
        out = x
        if self.wide:
            out = self.scales(s, slots)
        r = x - 1
        return q + out + k + r

    def plain(self, x):
        slots = x * 2
        k, s = self.quant(x, slots)
        q = x * 3
        out = x
        if self.wide:
            out = self.project(slots)
        r = x - 1
        return q + out + k + r

    def rebound(self, x):
        slots = x * 2
        k, s = self.quant(x, slots)
        q = x * 3
        out = x
        if self.wide:
            slots = x * 4
            out = self.scales(s, slots)
        r = x - 1
        return q + out + k + r

    def other_guard(self, x):
        slots = x * 2
        k, s = self.quant(x, slots)
        q = x * 3
        out = x
        if self.wide:
            out = self.other_project(slots)
        r = x - 1
        return q + out + k + r

    def sibling(self, x):
        slots = x * 2
        k = x
        if self.wide:
            k, s = self.quant(x, slots)
        q = x * 3
        out = x
        if self.empty:
            out = self.project(slots)
        r = x - 1
        return q + out + k + r
""" + caller_source()

_CASES = ["bound", "dominated", "plain", "rebound", "other_guard", "sibling"]
_ONCE = ["bound", "dominated", "plain"]
_TWICE = ["rebound", "other_guard", "sibling"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _keeps(method: str) -> int:
    return method_source(_code(), method).count('runtime.record_stream(slots, "side")')


@pytest.mark.parametrize("method", _ONCE)
def test_kept_once(method: str) -> None:
    assert _keeps(method) == 1


def test_kept_again_where_the_earlier_keep_may_not_cover() -> None:
    assert [_keeps(method) for method in _TWICE] == [2, 2, 2]


def _want(method: str, x: torch.Tensor, empty: bool, wide: bool) -> torch.Tensor:
    return _result(method, x, empty, wide) + (x - 1)  # ``r``: allocated on the caller's stream before the join


def _result(method: str, x: torch.Tensor, empty: bool, wide: bool) -> torch.Tensor:
    slots, q = x * 2, x * 3
    k, s = x * 2, x.sum(dim=-1, keepdim=True) + slots
    if method == "bound":
        return q + (x if empty else (x + 1).sum(dim=-1, keepdim=True) * 3 + slots * 4)
    if method == "sibling":
        return q + (slots - 1 if empty else x) + (k if wide else x)
    if not wide:
        return q + x + k
    later = {"dominated": s * 3 + slots, "plain": slots - 1, "other_guard": slots - 1, "rebound": s * 3 + x * 4}
    return q + later[method] + k


@pytest.mark.parametrize("flags", [(False, True, True), (True, True, False), (True, False, True), (False, True, False)])
@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", _CASES)
def test_race_free_and_exact(method: str, target: str, flags: tuple[bool, bool, bool]) -> None:
    empty, on, wide = flags
    x = torch.randn(2, 3)
    got = run_checked(_code(target), target, lambda m: m.Caller(method, empty, on, wide), (x,))
    torch.testing.assert_close(got, _want(method, x, empty, wide))


@pytest.mark.parametrize(("method", "flags"), [("bound", (False, True)), ("plain", (False, True))])
def test_taking_the_one_keep_out_races(method: str, flags: tuple[bool, bool]) -> None:
    code = _code()
    body = method_source(code, method)
    keep = 'runtime.record_stream(slots, "side")'
    without = code.replace(body, body.replace(keep, "pass"))
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Caller(method, flags[0], True, flags[1]), (torch.randn(2, 3),))


def test_taking_the_sibling_keep_out_races() -> None:
    code = _code()
    body = method_source(code, "sibling")
    keep = 'runtime.record_stream(slots, "side")'
    later = body.rindex(keep)
    without = code.replace(body, body[:later] + "pass" + body[later + len(keep) :])
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Caller("sibling", True, True, False), (torch.randn(2, 3),))
