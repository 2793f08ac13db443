"""A micro-batch loop over ``self.sub.ds[i]`` runs apart from a callee reading a sibling path ``self.sub.k``.

``item_apart.py`` keeps this iteration's item of a list of distinct objects apart from earlier iterations' calls,
unless the callee's body reaches the list through its own object (``self.sub.ds[1].buf``: it may read the item this
iteration changes). The body's reads were named by first attribute (``sub``), so a body reading only
``self.sub.k``, a tensor ``Holder`` makes of its own, "reached" ``self.sub.ds`` and the loop waited for the
previous micro-batch's dispatch before filling its own dispatcher. The reads are now paths
(``body_reads.callee_reads``, cut where ``apart_attributes.py`` cannot tell them apart): ``sub.k`` does not meet
``sub.ds``. The wait stays where the body reads the list (``self.sub.ds[1].buf``) or where ``Holder`` makes ``k``
from the list (``self.k = self.ds[0].buf``). Race-free and exact on every target.
"""

from __future__ import annotations

import types

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Dispatcher:
    def __init__(self, width: int) -> None:
        self.buf = torch.zeros(2, width)

    def prepare(self, h):
        self.buf.copy_(h)


class Holder(nn.Module):
    def __init__(self, width: int = 3) -> None:
        super().__init__()
        self.ds = [Dispatcher(width) for _ in range(2)]
        MAKE_K


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sub = Holder()

    @on_stream("comm")
    def dispatch(self, d: Dispatcher):
        return READ

    def forward(self, hs: list[torch.Tensor]):
        n = len(hs)
        out: list[torch.Tensor | None] = [None] * n
        ys: list[torch.Tensor | None] = [None] * n
        for i in range(n):
            h = hs[i] + 1
            self.sub.ds[i].prepare(h)
            out[i] = self.dispatch(self.sub.ds[i])
        for i in range(n):
            ys[i] = out[i] * 3
        return torch.cat(ys)
"""
OWN_K = "self.k = torch.full((2, 3), 2.0)"
CASES = {  # how ``Holder`` makes ``k``, what the callee reads; whether the loop waits for the earlier dispatch
    "sibling": (OWN_K, "d.buf * 2 + self.sub.k", False),
    "the_list": (OWN_K, "d.buf * 2 + self.sub.ds[1].buf", True),
    "k_of_the_list": ("self.k = self.ds[0].buf", "d.buf * 2 + self.sub.k", True),
}


def _source(case: str) -> str:
    make, read, _ = CASES[case]
    return SOURCE.replace("MAKE_K", make).replace("READ", read)


def _loop(case: str) -> list[str]:
    code = transform_source(_source(case), path="m.py", target="portable")
    lines = [line.strip() for line in code.splitlines()]
    start = lines.index("for i in range(n):")
    return lines[start : lines.index("for i in range(n):", start + 1)]


def _eager(source: str, hs: list[torch.Tensor], calls: int) -> torch.Tensor:
    module = types.ModuleType("eager_item_paths")
    exec(compile(source, "<eager_item_paths.py>", "exec"), module.__dict__)  # noqa: S102 (the code under test)
    model = module.Model()
    return [model(hs) for _ in range(calls)][-1]


@pytest.mark.parametrize("case", CASES)
def test_the_loop_waits_only_where_the_body_reaches_the_list(case: str) -> None:
    loop = _loop(case)
    waits = 'runtime.wait("m.Model.dispatch.join")' in loop
    assert waits is CASES[case][2], "\n".join(loop)
    if waits:
        assert loop.index('runtime.wait("m.Model.dispatch.join")') < loop.index("self.sub.ds[i].prepare(h)")


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("case", CASES)
def test_race_free_and_exact(case: str, target: str) -> None:
    source, hs = _source(case), [torch.randn(2, 3) for _ in range(2)]
    code = transform_source(source, path="m.py", target=target)
    native = target == "cuda"  # native events are made at their first eager use
    got = trace_graph(code, target, lambda m: m.Model(), (hs,), eager_first=native).outputs
    torch.testing.assert_close(got, _eager(source, hs, 2 if native else 1))
