"""Views of one tensor share its storage: a call on a side stream that reads several chunks of one ``split``
keeps one of them alive (``record_stream`` marks the storage), not each (omni-infer's casts of the
reduce-scatter parts), and a loop over the chunks keeps the tensor once, before the loop (the chunked MoE).
A chunk bound again is its own tensor and is kept apart, and so is a loop that binds the tensor's name again.
All run under the race checker, called with inputs their caller made right before."""

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
    @on_stream("cast")
    def cast(self, a, b, c):
        return a * 2, b * 3, c * 4

    def chunks(self, x):
        y = x * 5
        a, b, c = y.split(2)
        d = c * 7
        a, b, c = self.cast(a, b, c)
        e = d + 1
        return a.sum() + b.sum() + c.sum() + e.sum()

    def rebound(self, x):
        y = x * 5
        a, b, c = y.split(2)
        c = c + 1
        d = c * 7
        a, b, c = self.cast(a, b, c)
        e = d + 1
        return a.sum() + b.sum() + c.sum() + e.sum()


    def loop(self, x):
        y = x * 5
        outs = []
        for part in y.split(2):
            q = self.side(part)
            g = x[:2] * 3
            outs.append(q + g)
        return torch.cat(outs)

    def loop_rebinds(self, x):
        y = x * 5
        outs = []
        for part in y.split(2):
            q = self.side(part)
            g = x[:2] * 3
            y = g + 1
            outs.append(q + g)
        return torch.cat(outs) + y.sum()

    @on_stream("cast")
    def side(self, p):
        return p * 2

""" + caller_source()


@pytest.mark.parametrize(("method", "kept"), [("chunks", ["a"]), ("rebound", ["a", "c"])])
def test_one_record_stream_per_storage(method: str, kept: list[str]) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    found = [line.split("(")[1].split(",")[0] for line in body.splitlines() if "record_stream(" in line]
    assert found == kept


@pytest.mark.parametrize("method", ["chunks", "rebound"])
def test_race_free_and_exact(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(6, 3)
    a, b, c = (x * 5).split(2)
    d = (c + 1 if method == "rebound" else c) * 7
    c = c + 1 if method == "rebound" else c
    want = (a * 2).sum() + (b * 3).sum() + (c * 4).sum() + (d + 1).sum()
    torch.testing.assert_close(run_checked(code, "portable", lambda m: m.Caller(method), (x,)), want)


@pytest.mark.parametrize(("method", "before", "inside"), [("loop", True, False), ("loop_rebinds", False, True)])
def test_a_loop_over_views_keeps_the_tensor_once_before_it(method: str, before: bool, inside: bool) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    head, loop = body.split("        for part in", 1)
    assert ('runtime.record_stream(y, "cast")' in head) is before
    assert ('runtime.record_stream(part, "cast")' in loop) is inside


@pytest.mark.parametrize("method", ["loop", "loop_rebinds"])
def test_loops_race_free_and_exact(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(6, 3)
    parts = (x * 5).split(2)
    want = torch.cat([p * 2 + x[:2] * 3 for p in parts])
    if method == "loop_rebinds":
        want = want + (x[:2] * 3 + 1).sum()
    torch.testing.assert_close(run_checked(code, "portable", lambda m: m.Caller(method), (x,)), want)
