"""A tensor a stream call reads of an object its caller changes, handed back in its results as it was, needs no keep
where the caller holds that result until it returns (``returned_state.py``).

vllm_qwen3_dbo's dispatch returns ``token_dispatcher.permute2()``, which returns the dispatcher's
``tokens_per_expert`` as the caller left it: the result *is* the tensor kept. Here ``Box.take()`` returns
``self.c`` as ``load`` left it; the caller binds it to a name it binds nowhere else (``plain``) or stores it into
a slot of its own list, one slot per iteration of a ``range`` loop (``looped``): it holds it past every join, so
``box.c`` is not kept (``box.t``, which the side stream reads and does not return, still is). Where the caller may
drop the result before the join (a name bound again, a slot another statement stores, an index the loop body
binds again) or the body may change the attribute first (``send_and_reset`` stores ``c``), the keep stays. Every
case is race-free and exact on four targets; a keep taken out where the caller drops the result races.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_trace import TARGETS, generated, sync_counts

from codegen.lower.flow import returned_state
from npudsl import StreamRaceError

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Box:
    def __init__(self):
        self.k = 2

    def load(self, x):
        self.t = x * self.k
        self.c = x + 1

    def send(self):
        self.out = self.t * self.c

    def take(self):
        return self.out, self.c

    def send_and_reset(self):
        self.out = self.t * self.c
        self.c = self.c * 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.boxes = [Box(), Box()]

    @on_stream("side")
    def side(self, box: Box) -> tuple[torch.Tensor, torch.Tensor]:
        box.send()
        return box.take()

    @on_stream("side")
    def resetting(self, box: Box) -> tuple[torch.Tensor, torch.Tensor]:
        box.send_and_reset()
        return box.take()

    def plain(self, x):
        box = self.boxes[0]
        box.load(x)
        out, c = self.side(box)
        z = x * 3
        return out + c + z

    def looped(self, x):
        xs = list(x.chunk(2))
        outs = [None] * 2
        cs = [None] * 2
        bs = self.boxes
        for i in range(2):
            bs[i].load(xs[i])
            outs[i], cs[i] = self.side(bs[i])
        z = x * 3
        return torch.cat(outs) + torch.cat(cs) + z

    def rebound(self, x):
        box = Box()
        box.load(x)
        out, c = self.side(box)
        box = None
        c = x * 3
        w = x * 5
        return out + c + w

    def other_store(self, x):
        xs = list(x.chunk(2))
        outs = [None] * 2
        cs = [None] * 2
        bs = self.boxes
        for i in range(2):
            bs[i].load(xs[i])
            outs[i], cs[i] = self.side(bs[i])
            cs[i] = xs[i] * 3
        return torch.cat(outs) + torch.cat(cs)

    def reset(self, x):
        box = self.boxes[0]
        box.load(x)
        out, c = self.resetting(box)
        z = x * 3
        return out + c + z
""" + caller_source()

_DROPPED = ["plain", "looped"]
_KEPT = ["rebound", "other_store", "reset"]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    out = 2 * x * (x + 1)
    if method == "rebound":
        return out + x * 3 + x * 5
    if method == "other_store":
        return out + x * 3
    return out + x + 1 + x * 3


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(4, 3)
    return sync_counts(generated(SOURCE, target), target, method, x, _want(method, x))


def _kept(method: str) -> set[str]:
    code = generated(SOURCE)
    body = code.split(f"    def {method}(self, x):")[1].split("\n    def ")[0]
    return set(re.findall(r"record_stream\((\w+(?:\[i\])?\.\w+), ", body))


@pytest.mark.parametrize("method", _DROPPED)
def test_the_returned_attribute_is_not_kept(method: str) -> None:
    kept = _kept(method)
    assert not any(k.endswith(".c") for k in kept), kept
    assert any(k.endswith(".t") for k in kept), kept  # read on the side stream, not returned


@pytest.mark.parametrize("method", _KEPT)
def test_the_keep_stays_where_the_caller_may_drop_it(method: str) -> None:
    assert any(k.endswith(".c") for k in _kept(method)), _kept(method)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", _DROPPED + _KEPT)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] > 0


def test_sync_calls() -> None:
    """One call: its fork (record, switch, wait), one keep (``box.t``), its join (record, wait); two iterations:
    each its fork and one keep, the second iteration's ``bs[i].load`` waiting for the first call (the analysis
    reads names, not indices), the last join waited after the loop."""
    assert dict(_sync("plain", "portable")) == {"switch": 1, "record": 2, "wait": 2, "record_stream": 1}
    assert dict(_sync("looped", "portable")) == {"switch": 2, "record": 4, "wait": 4, "record_stream": 2}


def test_dropping_the_keep_where_the_caller_drops_the_result_races(monkeypatch: pytest.MonkeyPatch) -> None:
    """Taken for held although ``c = x * 3`` drops the result before the join (and ``box = None`` the object):
    ``c``'s memory goes to ``w`` while the side stream still reads it."""
    monkeypatch.setattr(returned_state, "holds_until_return", lambda *_: True)
    with pytest.raises(StreamRaceError):
        _sync("rebound", "portable")
