"""NPD515 tells the truth: moving the assignments it names before the first call saves the second fork.

``kv = self.project(x)``, then ``cos = x.cos()`` on the caller's stream, then ``self.rotate(kv, cos)`` on the
same side stream: the second call waits for ``cos`` with a fork of its own (a record and a wait). The warning
sits on ``cos = ...``; the same method with that line first runs both calls under one fork. Both orders are
race-free on every path and equal to the arithmetic on one stream.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.check.rules.pipeline import check_source
from codegen.driver.api import transform_source
from codegen.index.index import build_index
from npudsl.devices import DEFAULT_DEVICE
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def project(self, x):
        return x * 2

    @on_stream("side")
    def rotate(self, kv, cos):
        return kv * cos + 1

    def split(self, x):
        kv = self.project(x)
        cos = x.cos()
        out = self.rotate(kv, cos)
        y = x.relu()
        return out + y

    def hoisted(self, x):
        cos = x.cos()
        kv = self.project(x)
        out = self.rotate(kv, cos)
        y = x.relu()
        return out + y
""" + caller_source()

_SYNC = ("runtime.record(", "runtime.wait(", "runtime.record_stream(", "runtime.stream(")


def _calls(method: str) -> dict[str, int]:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    return {call: body.count(call) for call in _SYNC}


def test_the_warning_sits_on_the_assignment() -> None:
    found = check_source(
        SOURCE,
        path="m.py",
        module_name="m",
        index=build_index([("m", SOURCE)]),
        target="portable",
        device=DEFAULT_DEVICE,
    )
    line = SOURCE.splitlines().index("        cos = x.cos()") + 1
    assert [(d.code, d.line, d.col) for d in found] == [("NPD515", line, 9)]
    assert "`cos`" in found[0].message and f"before line {line - 1}" in found[0].hint


def test_following_it_saves_the_second_fork() -> None:
    split, hoisted = _calls("split"), _calls("hoisted")
    assert split["runtime.stream("] == 2 and hoisted["runtime.stream("] == 1
    assert split["runtime.record("] - hoisted["runtime.record("] == 1
    assert split["runtime.wait("] - hoisted["runtime.wait("] == 1
    assert sum(hoisted.values()) < sum(split.values())


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge"])
@pytest.mark.parametrize("method", ["split", "hoisted"])
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, x * 2 * x.cos() + 1 + x.relu())
