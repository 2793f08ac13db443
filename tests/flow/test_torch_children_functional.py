"""A torch container's ``forward`` runs its children, and a function of ``torch.nn.functional`` may write its inputs.

``self.seq = nn.Sequential(nn.BatchNorm1d(3))``, then ``w = self.seq(z)`` on the caller's stream while a side call
reads ``self.seq[0].running_mean``: ``Sequential.forward`` writes nothing itself, and was taken to write nothing,
but its batch norm child updates its running stats in place (the race checker on main: "read on stream 'side' ...
and written in place on stream 'default' with no wait in between"). Likewise ``F.embedding(ids, self.weight,
max_norm=1.0)`` renorms ``self.weight`` in place through ``torch.embedding_renorm_``, though ATen's ``embedding``
writes nothing. Which torch methods run their children and which functional parameters are written, under which
``if``, is read from torch's sources (``nn.Embedding(4, 3, max_norm=1.0)``'s ``forward`` too, by what its
constructor is given) (``torch_module_methods_build.py``, ``torch_functional_build.py``); the
container's children are read where ``__init__`` builds it (``container_children.py``). Children that write
nothing (``nn.Linear``, ``nn.ReLU``) and ``F.embedding`` without ``max_norm`` keep the overlap.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.torch_functional_build import TABLE, build
from codegen.lower.flow.torch_module_methods import torch_method_runs_children, torch_method_writes
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
import torch.nn.functional as F
from npudsl import on_stream


def _stack():
    return nn.Sequential(nn.BatchNorm1d(3))


class Block(nn.Sequential):
    pass


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
        self.plain = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
        self.made = _stack()
        self.block = Block(nn.BatchNorm1d(3))
        layers = [nn.BatchNorm1d(3)]
        self.spread = nn.Sequential(*layers)
        self.weight = nn.Parameter(torch.full((4, 3), 2.0))
        self.renormed = nn.Embedding(4, 3, max_norm=1.0)
        self.table = nn.Embedding(4, 3)
        with torch.no_grad():
            self.renormed.weight.fill_(2.0)
            self.table.weight.fill_(2.0)
        with torch.no_grad():
            for stack in (self.seq[1], self.made[0], self.block[0], self.spread[0]):
                stack.running_mean.fill_(2.0)
            self.plain[0].weight.fill_(2.0)

    @on_stream("side")
    def side_seq(self, x):
        return x * self.seq[1].running_mean

    @on_stream("side")
    def side_plain(self, x):
        return x * self.plain[0].weight[0]

    @on_stream("side")
    def side_made(self, x):
        return x * self.made[0].running_mean

    @on_stream("side")
    def side_block(self, x):
        return x * self.block[0].running_mean

    @on_stream("side")
    def side_spread(self, x):
        return x * self.spread[0].running_mean

    @on_stream("side")
    def side_weight(self, x):
        return x * self.weight[0]

    @on_stream("side")
    def side_renorm(self, x):
        return x + F.embedding(torch.tensor([0]), self.weight, max_norm=1.0).sum() * 0

    def sequential(self, x):
        y = self.side_seq(x)
        z = x * 5
        w = self.seq(z)
        return y + z + w * 0

    def made_by_factory(self, x):
        y = self.side_made(x)
        z = x * 5
        w = self.made(z)
        return y + z + w * 0

    def derived(self, x):
        y = self.side_block(x)
        z = x * 5
        w = self.block(z)
        return y + z + w * 0

    def spread_children(self, x):
        y = self.side_spread(x)
        z = x * 5
        w = self.spread(z)
        return y + z + w * 0

    def embedding(self, x):
        y = self.side_weight(x)
        z = x * 5
        w = F.embedding(torch.tensor([0, 1]), self.weight, max_norm=1.0)
        return y + z + w.sum() * 0

    def renorm_on_side(self, x):
        y = self.side_renorm(x)
        z = x * 5
        w = self.weight[0] * 0
        return y + z + w

    @on_stream("side")
    def side_renormed(self, x):
        return x * self.renormed.weight[0]

    @on_stream("side")
    def side_table(self, x):
        return x * self.table.weight[0]

    def embedding_module(self, x):
        y = self.side_renormed(x)
        z = x * 5
        w = self.renormed(torch.tensor([0, 1]))
        return y + z + w.sum() * 0

    def table_module(self, x):
        y = self.side_table(x)
        z = x * 5
        w = self.table(torch.tensor([0, 1]))
        return y + z + w.sum() * 0

    def plain_children(self, x):
        y = self.side_plain(x)
        z = x * 5
        w = self.plain(z)
        return y + z + w * 0

    def lookup(self, x):
        y = self.side_weight(x)
        z = x * 5
        w = F.embedding(torch.tensor([0, 1]), self.weight)
        return y + z + w.sum() * 0
""" + caller_source()

WRITES = {
    "sequential": "w = self.seq(z)",
    "made_by_factory": "w = self.made(z)",
    "derived": "w = self.block(z)",
    "spread_children": "w = self.spread(z)",
    "embedding": "w = F.embedding(",
    "renorm_on_side": "w = self.weight[0] * 0",
    "embedding_module": "w = self.renormed(",
}
APART = {"plain_children": "w = self.plain(z)", "lookup": "w = F.embedding(", "table_module": "w = self.table("}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_the_table_is_torchs() -> None:
    assert TABLE.read_text(encoding="utf-8") == build(), "run: python -m codegen.lower.flow.torch_functional_build"


def test_what_the_tables_say() -> None:
    assert torch_method_runs_children("Sequential", "forward") and not torch_method_writes("Sequential", "forward")
    assert not torch_method_runs_children("Linear", "forward") and torch_method_runs_children("Block", "x") is False
    assert "weight:max_norm" in TABLE.read_text(encoding="utf-8")


@pytest.mark.parametrize("method", WRITES)
def test_the_write_waits_for_the_pending_call(method: str) -> None:
    body = _body(method)
    before = body[: body.index(WRITES[method])]
    assert re.search(r'runtime\.wait\("m\.Model\.side_\w+\.join"\)', before), body


@pytest.mark.parametrize("method", APART)
def test_what_writes_nothing_keeps_the_overlap(method: str) -> None:
    body = _body(method)
    assert body.index('runtime.stream("side"') < body.index(APART[method]) < body.rindex("runtime.wait("), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITES, *APART])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
