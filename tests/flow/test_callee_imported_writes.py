"""A stream function that writes its parameter in place through a function of another module of the package writes
the caller's tensor: the caller waits for it before reading that tensor, transformed together or each file alone.

``self.side(x, cache)`` whose body runs ``scatter(cache, x * 2)`` with ``from .helpers import scatter`` (vllm-ascend's
``dsa_kv_compress_scatter`` into the window cache, from ``layers.py``), then ``y = cache * 5`` on the main stream
(after ``z = x * 7``, which overlaps the call).
Before, the index read only the function's own module for what it writes (``param_writes.py``), so the caller read
``cache`` while the side stream still wrote it (``codegen/index/across_files.py`` reads the other module now; a
module the run does not hold writes every argument it is given). A call on the same stream that writes what an
earlier call there reads runs after it: the caller does not wait for the earlier one in between.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

HELPERS = """\
def scatter(cache, x):
    cache.copy_(x)


def total(cache, x):
    return cache.sum() + x
"""

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream

from .helpers import scatter, total


class Model(nn.Module):
    @on_stream("side")
    def side(self, x, cache):
        scatter(cache, x * 2)

    @on_stream("side")
    def reader(self, x, cache):
        return total(cache, x)

    def written(self, x):
        cache = x * 3
        self.side(x, cache)
        z = x * 7
        y = cache * 5
        return y + z

    def same_stream_writer(self, x):
        cache = x * 3
        r = self.reader(x, cache)
        z = x * 7
        self.side(x, cache)
        w = x * 11
        return r + cache * 5 + z + w

    def read(self, x):
        cache = x * 3
        r = self.reader(x, cache)
        y = cache * 5
        z = x * 7
        return r + y + z
""" + caller_source()


def _generated(tmp_path: Path, target: str, *, alone: bool) -> tuple[str, str]:
    name, codes = written_package(
        tmp_path, "callee_writes", target, {"model.py": MODEL, "helpers.py": HELPERS}, alone=alone
    )
    return name, codes["model.py"]


@pytest.mark.parametrize("alone", [False, True])
def test_the_caller_waits_before_reading_what_the_call_writes(tmp_path: Path, alone: bool) -> None:
    body = method_source(_generated(tmp_path, "portable", alone=alone)[1], "written")
    assert body.index("z = x * 7") < body.rindex("runtime.wait(") < body.index("y = cache * 5")


def test_a_reader_keeps_the_overlap_where_the_run_holds_its_helper(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable", alone=False)[1], "read")
    assert body.rindex("runtime.wait(") > body.index("z = x * 7")


def test_a_writer_on_the_readers_stream_does_not_wait_for_it(tmp_path: Path) -> None:
    """The reader's stream runs the writer after it: no join in between (``transfer._writes_inputs``)."""
    body = method_source(_generated(tmp_path, "portable", alone=False)[1], "same_stream_writer")
    assert body.index("runtime.wait(", body.index("z = x * 7")) > body.index("w = x * 11")


WANT = {
    "written": lambda x: x * 2 * 5 + x * 7,
    "read": lambda x: (x * 3).sum() + x + x * 3 * 5 + x * 7,
    "same_stream_writer": lambda x: (x * 3).sum() + x + x * 2 * 5 + x * 7 + x * 11,
}


@pytest.mark.parametrize("alone", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", list(WANT))
def test_race_free_and_exact(tmp_path: Path, method: str, target: str, alone: bool) -> None:
    name, _ = _generated(tmp_path, target, alone=alone)
    x = torch.randn(2, 3)
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    torch.testing.assert_close(got, WANT[method](x))
