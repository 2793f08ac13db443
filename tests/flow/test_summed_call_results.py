"""A sum of calls' results that are lists: ``ys = self.pair(h) + self.pair(h)``, then a write through ``ys``.

``+`` of two lists makes one holding both's items: ``ys[0]`` is the tensor ``pair`` returned, here ``h`` itself, so
``ys[0].add_(1)`` and ``for t in ys: t.mul_(2)`` write ``h``. The sum was read as new memory (its operands are calls,
not names the function binds to lists), the write ran while a side call still read ``h``: the race checker reports
it on the previous main. A call whose function returns a container at every ``return`` makes the sum a
concatenation (``codegen/lower/flow/container_results.py``), also through names bound to such results (``ys = xs +
zs``), an augmented sum (``ys += self.pair(h)``) and a loop over the sum; a ``pair`` returning fresh tensors links
the sum to none of the caller's, and its write still overlaps the side call.
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
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def send(self, x):
        return x.tanh()

    def pair(self, h):
        return [h, h[1]]

    def fresh(self, h):
        return [h * 2, h * 3]

    def by_item(self, x):
        h = x * 1
        ys = self.pair(h) + self.pair(h)
        a = self.send(h)
        ys[0].add_(1)
        return h + a

    def by_loop(self, x):
        h = x * 1
        ys = self.pair(h) + self.pair(h)
        a = self.send(h)
        for t in ys:
            t.mul_(2)
        return h + a

    def by_names(self, x):
        h = x * 1
        xs = self.pair(h)
        zs = self.pair(h)
        ys = xs + zs
        a = self.send(h)
        ys[2].add_(1)
        return h + a

    def by_extended(self, x):
        h = x * 1
        ys = []
        ys += self.pair(h)
        a = self.send(h)
        ys[0].add_(1)
        return h + a

    def by_fresh(self, x):
        h = x * 1
        ys = self.fresh(h) + self.fresh(h)
        a = self.send(h)
        ys[0].add_(1)
        return ys[0] + a
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

WRITING = {
    "by_item": "ys[0].add_(1)",
    "by_loop": "t.mul_(2)",
    "by_names": "ys[2].add_(1)",
    "by_extended": "ys[0].add_(1)",
}


def _expected(x: torch.Tensor, method: str) -> torch.Tensor:
    h = x.clone()
    if method == "by_loop":  # h twice, h[1] twice: h * 4, then its row 1 * 4 again
        h *= 4
        h[1] *= 4
    elif method == "by_fresh":
        return x * 2 + 1 + x.tanh()
    else:
        h += 1
    return h + x.tanh()


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = generated_files(tmp_path, "pkg_summed_results", {"__init__.py": INIT, "model.py": MODEL}, target)
    return name, codes["model.py"]


def _waits_for_the_side(text: str) -> bool:
    return any(line.strip().startswith("runtime.wait(") and 'send.join")' in line for line in text.splitlines())


@pytest.mark.parametrize("method", WRITING)
def test_the_write_through_the_sum_waits_for_the_side_read(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    before, after = body.split(WRITING[method])
    joined = _waits_for_the_side(before) or "runtime.stream" not in before  # joined before it, or run at once
    assert joined and not _waits_for_the_side(after)  # the previous main waited after it


def test_a_sum_of_fresh_results_still_overlaps(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "by_fresh")
    before, after = body.split("ys[0].add_(1)")
    assert "runtime.stream" in before and not _waits_for_the_side(before) and _waits_for_the_side(after)


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WRITING, "by_fresh"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, _expected(x, method))
