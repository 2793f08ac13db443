"""The ten torch_npu ops op-plugin's kernels left unknown are settled by CANN's declarations (``tools/npu_settled.py``):
an aclnn function's ``Ref`` parameters, an aclops operator's input and output of one name.

``npu_dequant_rope_quant_kvcache`` hands ``k_cache`` and ``v_cache`` to ``aclnnDequantRopeQuantKvcache``'s
``kCacheRef``/``vCacheRef``: it writes those two only, so it runs beside a side call reading its ``x`` (before,
every argument was taken as written and the side call was joined first), and is joined after a side call reading
its cache. Generated for portable and aclgraph, run race-checked against a stand-in that writes the caches in
place, and compared exactly with the same arithmetic on one stream.
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

from codegen.lower.flow.npu_schema import Param, written_params
from codegen.lower.flow.npu_table import KERNEL_WRITES, UNDECLARED
from tools.npu_settled import SETTLED

STANDIN = """\
import torch


def npu_dequant_rope_quant_kvcache(x, cos, sin, k_cache, v_cache, indices, scale_k, scale_v, size_splits, **options):
    k_cache.index_copy_(0, indices, x[: indices.shape[0]] * cos)
    v_cache.index_copy_(0, indices, x[: indices.shape[0]] * sin)
    return x * cos, x * sin, x, k_cache, v_cache
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

    def cache_op_beside(self, x):
        y = self.side(x)
        k_cache, v_cache = torch.zeros_like(x), torch.zeros_like(x)
        q, k, v, kc, vc = torch_npu.npu_dequant_rope_quant_kvcache(
            x, x[0] * 0 + 2, x[0] * 0 + 3, k_cache, v_cache, torch.tensor([1]), x[0], x[0], [4, 4, 4]
        )
        return y + q + kc + vc

    def cache_read_aside(self, x):
        k_cache, v_cache = x * 1, x * 1
        y = self.side(k_cache)
        z = torch.ones(x.shape) * 3
        q, k, v, kc, vc = torch_npu.npu_dequant_rope_quant_kvcache(
            x, x[0] * 0 + 2, x[0] * 0 + 3, k_cache, v_cache, torch.tensor([1]), x[0], x[0], [4, 4, 4]
        )
        return y + q + kc + z
""" + caller_source()

METHODS = ["cache_op_beside", "cache_read_aside"]


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    """(the generated package's name, its ``model.py``), under ``tmp_path / "out"`` with the stand-in."""
    name, codes = written_package(tmp_path, "npusettled", target, {"model.py": MODEL}, beside={"torch_npu.py": STANDIN})
    return name, codes["model.py"]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    """The same arithmetic, on one stream."""
    if method == "cache_op_beside":
        k_cache, v_cache = torch.zeros_like(x), torch.zeros_like(x)
        k_cache[1], v_cache[1] = x[0] * 2, x[0] * 3
        return x * 2 + x * 2 + k_cache + v_cache
    k_cache = x * 1
    k_cache[1] = x[0] * 2
    return x * 2 + x * 2 + k_cache + 3


def test_every_op_left_unknown_is_settled() -> None:
    assert not UNDECLARED
    assert all(tuple(sorted(KERNEL_WRITES[op])) == tuple(sorted(s.writes)) for op, s in SETTLED.items())
    assert written_params("npu_apply_rotary_pos_emb") == ((Param("query", 0), Param("key", 1)),)
    assert written_params("npu_mla_prolog_v2") == ((Param("kv_cache", 10), Param("kr_cache", 11)),)
    assert written_params("npu_batch_gather_matmul") == ((),)  # aclnnAddLora's ``y`` is no Ref
    assert written_params("npu_get_float_status") == ((Param("self", 0),),)


def test_an_op_writing_its_caches_runs_beside_a_side_call_reading_its_input(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "cache_op_beside")
    assert body.index("npu_dequant_rope_quant_kvcache") < body.rindex("runtime.wait(")


def test_an_op_writing_a_cache_a_side_call_reads_waits(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "cache_read_aside")
    assert body.index("z = ") < body.rindex("runtime.wait(") < body.index("npu_dequant_rope_quant_kvcache")


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    try:
        got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    finally:
        sys.modules.pop("torch_npu", None)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
