"""A result that is an argument as it came is that argument's memory: a write through it, or a side call reading
it, orders against the argument (``codegen/lower/flow/result_aliases.py``), and an op whose kernel says which
arguments it writes writes only those (``KERNEL_WRITES`` of ``npu_table.py``).

``c = torch_npu.npu_scatter_nd_update_(x, ...)`` (``-> Tensor(a!)``), ``c = x.mul_(1)`` (ATen: an op writing
``self`` returns it) and ``k_out, ... = torch_npu.npu_kv_rmsnorm_rope_cache(..., k_cache, ckv_cache)`` (its kernel
returns the caches) bind ``c`` and ``k_out`` to their argument. Before, they were fresh tensors: ``c.add_(1)`` while
a side call still read ``x`` was not joined, and the race checker found it. ``npu_kv_rmsnorm_rope_cache`` was
taken to write every argument (its schema hides its writes); op-plugin's ``npu_kv_rmsnorm_rope_cache_v2`` calls
the same aclnn function declaring only the caches written, so now it runs beside a side call reading its ``kv``.
Generated for portable and aclgraph, run race-checked against a stand-in ``torch_npu`` that does what the kernels
do, and compared exactly with the same arithmetic on one stream.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source
from written_package import written_package

from codegen.lower.flow.npu_schema import Param, Returned, returned_params, written_params

STANDIN = """\
import torch


def npu_scatter_nd_update_(self, indices, updates):
    return self.index_copy_(0, indices, updates)


def npu_kv_rmsnorm_rope_cache(kv, gamma, cos, sin, index, k_cache, ckv_cache, **options):
    k_cache.index_copy_(0, index, kv[: index.shape[0]] * cos)
    ckv_cache.index_copy_(0, index, kv[: index.shape[0]] * gamma)
    return k_cache, ckv_cache, kv * sin, kv * gamma
"""

MODEL = """\
import torch
import torch_npu
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def npu_result_written(self, x):
        c = torch_npu.npu_scatter_nd_update_(x, torch.tensor([0]), torch.ones(1, x.shape[-1]))
        y = self.side(x)
        z = torch.ones_like(x) * 3
        c.add_(1)
        return y + c + z

    def npu_result_read_aside(self, x):
        c = torch_npu.npu_scatter_nd_update_(x, torch.tensor([0]), torch.ones(1, x.shape[-1]))
        y = self.side(c)
        z = torch.ones_like(x) * 3
        x.add_(1)
        return y + x + z

    def aten_result_written(self, x):
        c = x.mul_(1)
        y = self.side(x)
        z = torch.ones_like(x) * 3
        c.add_(1)
        return y + c + z

    def cache_result_written(self, x):
        k_cache, ckv_cache = x * 1, x * 1
        k_out, ckv_out, kr, ckv = torch_npu.npu_kv_rmsnorm_rope_cache(
            x, x[0] * 0 + 2, x[0] * 0 + 3, x[0] * 0 + 4, torch.tensor([1]), k_cache, ckv_cache
        )
        y = self.side(k_cache)
        z = kr + ckv
        k_out.mul_(2)
        return y + k_out + z

    def cache_op_beside(self, x):
        y = self.side(x)
        k_cache, ckv_cache = torch.zeros_like(x), torch.zeros_like(x)
        k_out, ckv_out, kr, ckv = torch_npu.npu_kv_rmsnorm_rope_cache(
            x, x[0] * 0 + 2, x[0] * 0 + 3, x[0] * 0 + 4, torch.tensor([1]), k_cache, ckv_cache
        )
        return y + k_out + ckv_out + kr
""" + caller_source()

RACED = ["npu_result_written", "npu_result_read_aside", "aten_result_written", "cache_result_written"]


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    """(the generated package's name, its ``model.py``), under ``tmp_path / "out"`` with the stand-in."""
    name, codes = written_package(tmp_path, "npualias", target, {"model.py": MODEL}, beside={"torch_npu.py": STANDIN})
    return name, codes["model.py"]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    """The same arithmetic, on one stream."""
    x = x.clone()
    if method.startswith("npu_"):
        x[0] = 1
    if method == "npu_result_read_aside":
        return x * 2 + (x + 1) + 3
    if method in ("npu_result_written", "aten_result_written"):
        return x * 2 + (x + 1) + 3
    k_cache = x * 1
    k_cache[1] = x[0] * 3
    if method == "cache_result_written":
        return k_cache * 2 + k_cache * 2 + (x * 4 + x * 2)
    k_cache = torch.zeros_like(x)
    k_cache[1], ckv = x[0] * 3, torch.zeros_like(x)
    ckv[1] = x[0] * 2
    return x * 2 + k_cache + ckv + x * 4


@pytest.mark.parametrize("method", RACED)
def test_the_write_through_the_result_waits(tmp_path: Path, method: str) -> None:
    """The side call overlaps the caller's next statement; the write through the alias comes after its join."""
    body = method_source(_generated(tmp_path, "portable")[1], method)
    write = "x.add_(1)" if method == "npu_result_read_aside" else ".mul_(2)" if "cache" in method else "c.add_(1)"
    assert body.index("runtime.stream(") < body.index("z = ") < body.rindex("runtime.wait(") < body.index(write)


def test_an_op_writing_only_its_caches_runs_beside_a_side_call_reading_its_input(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "cache_op_beside")
    assert body.index("npu_kv_rmsnorm_rope_cache") < body.rindex("runtime.wait(")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*RACED, "cache_op_beside"])
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    try:
        got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    finally:
        sys.modules.pop("torch_npu", None)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)


def test_the_table_reads_results_and_kernel_writes() -> None:
    assert returned_params("npu_scatter_nd_update_") == (Returned(None, Param("self", 0)),)
    assert returned_params("npu_broadcast", "out") == (Returned(None, Param("out", None)),)
    assert returned_params("npu_rms_norm") == ()
    kv = returned_params("npu_kv_rmsnorm_rope_cache")
    assert kv == (Returned(0, Param("k_cache", 5)), Returned(1, Param("ckv_cache", 6)))
    assert written_params("npu_kv_rmsnorm_rope_cache") == ((Param("k_cache", 5), Param("ckv_cache", 6)),)
    assert written_params("npu_grouped_matmul_add") == ((Param("self", 0),),)  # its kernel writes ``self``
