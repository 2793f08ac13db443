"""Views of one tensor share its storage: a call on a side stream that reads several chunks of one ``split``
keeps one of them alive (``record_stream`` marks the storage), not each (omni-infer's casts of the
reduce-scatter parts). A chunk bound again is its own tensor and is kept apart. Both run under the race
checker, called with inputs their caller made right before."""

from __future__ import annotations

import pytest
import torch

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


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x):
        return getattr(self.model, self.method)(x * 1)
"""


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.find("\n    def ", start + 1)]


@pytest.mark.parametrize(("method", "kept"), [("chunks", ["a"]), ("rebound", ["a", "c"])])
def test_one_record_stream_per_storage(method: str, kept: list[str]) -> None:
    body = _method(transform_source(SOURCE, path="m.py", target="portable"), method)
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
