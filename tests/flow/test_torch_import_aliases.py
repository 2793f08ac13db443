"""A view of a caller's tensor taken through an import alias of torch, then written in place.

``import torch as th`` then ``th.narrow(h, 0, 0, 2).add_(1)`` writes ``h``: ``torch.narrow`` returns a view of its
first argument (its ATen schema, ``Tensor(a) self -> Tensor(a)``). The readers of views and writes took the view's
root by spelling, from ``torch.`` only: through ``th`` (or ``from torch import narrow as nw``, ``th.Tensor.narrow``,
``nn.init.zeros_`` after ``from torch import nn``) the root was the module, the write to ``h`` was missed and the
caller ran it while a side call still read ``h`` (the race checker reports it on the previous main). The module's
imports are read once when it is parsed (``codegen/lower/flow/torch_callees.py``); ``th.add(h, 1)`` writes nothing
and still overlaps the side call.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_files, run_generated
from method_caller import caller_source
from method_source import method_source

MODEL = """\
import torch
import torch as th
from torch import nn
from torch import narrow as nw
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def send(self, x):
        return x.tanh()

    def by_alias(self, x):
        h = x * 1
        a = self.send(h)
        th.narrow(h, 0, 0, 1).add_(1)
        return h + a

    def by_from(self, x):
        h = x * 1
        a = self.send(h)
        nw(h, 0, 0, 1).add_(1)
        return h + a

    def by_select(self, x):
        h = x * 1
        a = self.send(h)
        th.select(h, 0, 1).zero_()
        return h + a

    def by_unbound(self, x):
        h = x * 1
        a = self.send(h)
        th.Tensor.narrow(h, 0, 0, 1).mul_(3)
        return h + a

    def by_init(self, x):
        h = x * 1
        a = self.send(h)
        nn.init.zeros_(th.narrow(h, 0, 1, 1))
        return h + a

    def by_plain(self, x):
        h = x * 1
        a = self.send(h)
        g = th.add(h, 1)
        return g + a
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

WRITING = {
    "by_alias": "th.narrow(h, 0, 0, 1).add_(1)",
    "by_from": "nw(h, 0, 0, 1).add_(1)",
    "by_select": "th.select(h, 0, 1).zero_()",
    "by_unbound": "th.Tensor.narrow(h, 0, 0, 1).mul_(3)",
    "by_init": "nn.init.zeros_(th.narrow(h, 0, 1, 1))",
}


def _written(x: torch.Tensor, method: str) -> torch.Tensor:
    h = x.clone()
    if method in ("by_alias", "by_from"):
        h[0] += 1
    elif method == "by_select":
        h[1] = 0
    elif method == "by_unbound":
        h[0] *= 3
    elif method == "by_init":
        h[1] = 0
    return h + x.tanh() if method != "by_plain" else h + 1 + x.tanh()


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = generated_files(tmp_path, "pkg_torch_aliases", {"__init__.py": INIT, "model.py": MODEL}, target)
    return name, codes["model.py"]


def _waits_for_the_side(text: str) -> bool:
    return any(line.strip().startswith("runtime.wait(") and 'send.join")' in line for line in text.splitlines())


@pytest.mark.parametrize("method", WRITING)
def test_the_write_through_the_alias_waits_for_the_side_read(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    before, after = body.split(WRITING[method])
    joined = _waits_for_the_side(before) or "runtime.stream" not in before  # joined before it, or run at once
    assert joined and not _waits_for_the_side(after)  # the previous main waited after it


def test_a_function_of_the_alias_that_writes_nothing_still_overlaps(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "by_plain")
    before, after = body.split("g = th.add(h, 1)")
    assert "runtime.stream" in before and not _waits_for_the_side(before) and _waits_for_the_side(after)


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITING, "by_plain"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, _written(x, method))
