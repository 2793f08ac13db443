"""A torch container of the run's own module classes runs their ``forward``: what those write, and nothing else.

``self.seq = nn.Sequential(Block(), Block())``, ``Block.forward`` running only its ``nn.Linear``: ``self.seq(z)``
on the caller's stream was taken to write every state of ``self.seq``, because the child's class was asked through
its bases (``nn.Module`` defines no ``forward``: unknown, so it may write), so a side call reading
``self.seq[0].lin.weight`` was joined before it (main: the wait before ``w = self.seq(z)``). The ``forward`` a class
of the run defines is read from its body (``container_children.py``, through ``item_calls.own_method_writes``), as
for a call on an item of a layer list: the overlap is kept across the container's call. The same holds for a class
decorated as a stream function held in the container (the container calls it as written, on the caller's stream).
A child whose ``forward`` writes its own buffer (``self.seen.add_(1)``) still makes the call wait.
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


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        with torch.no_grad():
            self.lin.weight.fill_(0.5)
            self.lin.bias.fill_(0.1)

    def forward(self, x):
        return self.lin(x)


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(3))

    def forward(self, x):
        self.seen.add_(1)
        return x + self.seen


@on_stream("aux")
class Decorated(Block):
    def forward(self, x):
        return self.lin(x) * 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(Block(), Block())
        self.counting = nn.Sequential(Block(), Counting())
        self.deco = nn.Sequential(Decorated(), Block())

    @on_stream("side")
    def side(self, x):
        return x * self.seq[0].lin.weight[0]

    @on_stream("side")
    def side_counting(self, x):
        return x * self.counting[1].seen

    @on_stream("side")
    def side_deco(self, x):
        return x * self.deco[0].lin.weight[0]

    def plain(self, x):
        y = self.side(x)
        z = x * 5
        w = self.seq(z)
        return y + z + w

    def decorated(self, x):
        y = self.side_deco(x)
        z = x * 5
        w = self.deco(z)
        return y + z + w

    def counts(self, x):
        y = self.side_counting(x)
        z = x * 5
        w = self.counting(z)
        return y + z + w
""" + caller_source()

KEPT = {"plain": "w = self.seq(z)", "decorated": "w = self.deco(z)"}
WAITS = {"counts": "w = self.counting(z)"}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", KEPT)
def test_children_writing_nothing_keep_the_overlap(method: str) -> None:
    body = _body(method)
    assert body.index('runtime.stream("side"') < body.index(KEPT[method]) < body.rindex("runtime.wait("), body


@pytest.mark.parametrize("method", WAITS)
def test_a_child_writing_its_state_waits(method: str) -> None:
    body = _body(method)
    assert body.rindex("runtime.wait(", 0, body.index(WAITS[method])) > body.index('runtime.stream("side"'), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*KEPT, *WAITS])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    plain = SOURCE.replace('@on_stream("side")', "").replace('@on_stream("aux")', "")
    reference = transform_source(plain, path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
