"""The overlap a torch_npu op's schema allows is race-free, and the join an in-place op needs is kept: the generated
code runs race-checked (portable and aclgraph) against a stand-in ``torch_npu`` written next to it, and equals the
same arithmetic on one stream.

The stand-in does what each op's schema and kernel do, in torch: ``npu_rms_norm`` reads its input (declared
``Tensor self``), ``npu_scatter_nd_update_`` writes it (``Tensor(a!) self``), ``npu_apply_rotary_pos_emb`` writes
``query`` and ``key`` though its schema leaves them plain (``KERNEL_WRITES`` in ``npu_table.py``, from its aclnn
call's ``queryRef``, ``keyRef``).
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

from codegen.driver.run import read_sources, run
from npudsl import StreamRaceError

STANDIN = """\
import torch


def npu_rms_norm(x, gamma, epsilon=1e-06):
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + epsilon)
    return x * rstd * gamma, rstd


def npu_scatter_nd_update_(self, indices, updates):
    return self.index_copy_(0, indices, updates)


def npu_apply_rotary_pos_emb(query, key, cos, sin, layout="BSND", rotary_mode="half"):
    query.mul_(cos).add_(sin)
    key.mul_(cos).add_(sin)
    return query, key
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

    def norm_reads(self, x):
        y = self.side(x)
        n, r = torch_npu.npu_rms_norm(x, torch.ones(x.shape[-1]))
        return y + n

    def ops_norm_reads(self, x):
        y = self.side(x)
        n, r = torch.ops.npu.npu_rms_norm.default(x, torch.ones(x.shape[-1]))
        return y + n

    def scatter_writes(self, x):
        y = self.side(x)
        torch_npu.npu_scatter_nd_update_(x, torch.tensor([0]), torch.zeros(1, x.shape[-1]))
        return y + x

    def rotary_writes(self, x):
        y = self.side(x)
        k = x * 1
        torch_npu.npu_apply_rotary_pos_emb(x, k, torch.ones(x.shape[-1]) * 2, torch.ones(x.shape[-1]))
        return y + x + k
""" + caller_source()

OVERLAPS = ["norm_reads", "ops_norm_reads"]
JOINS = ["scatter_writes", "rotary_writes"]


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    """(the generated package's name, its ``model.py``), under ``tmp_path / "out"`` with the stand-in."""
    name, codes = written_package(
        tmp_path,
        "npur",
        target,
        {"model.py": MODEL.replace("torch.ops.npu.npu_rms_norm.default", "torch_npu.npu_rms_norm")},
        beside={"torch_npu.py": STANDIN},
    )
    return name, codes["model.py"]


def _planned(tmp_path: Path) -> str:
    """``MODEL`` as transformed for portable, ``torch.ops.npu`` spelled as written."""
    folder = tmp_path / "plan"
    folder.mkdir()
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    return next(iter(run(read_sources([(str(folder / "model.py"), str(folder))]), target="portable", jobs=1))).code


@pytest.mark.parametrize("method", OVERLAPS)
def test_an_op_reading_the_tensor_runs_beside_the_side_call(tmp_path: Path, method: str) -> None:
    body = method_source(_planned(tmp_path), method)
    assert body.index("npu_rms_norm") < body.rindex("runtime.wait(")


@pytest.mark.parametrize("method", JOINS)
def test_an_op_writing_the_tensor_is_not_overlapped(tmp_path: Path, method: str) -> None:
    body = method_source(_planned(tmp_path), method)
    op = "npu_scatter_nd_update_" if method == "scatter_writes" else "npu_apply_rotary_pos_emb"
    assert "runtime.wait(" not in body or body.rindex("runtime.wait(") < body.index(op)


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    if method in OVERLAPS:
        return x * 2 + x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-06)
    if method == "scatter_writes":
        written = x.clone()
        written[0] = 0
        return x * 2 + written
    return x * 2 + (x * 2 + 1) * 2


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", OVERLAPS + JOINS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    try:
        got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), method=method)
    finally:
        sys.modules.pop("torch_npu", None)
    torch.testing.assert_close(got, _want(method, x))


def test_trusting_a_schema_that_hides_a_write_races(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Why ``KERNEL_WRITES`` exists: taken at its schema's word, ``npu_apply_rotary_pos_emb`` would run beside the
    side call still reading ``x``, and the checker finds the race."""
    from codegen.lower.flow import npu_schema, npu_table

    hidden = {op: written for op, written in npu_table.KERNEL_WRITES.items() if op != "npu_apply_rotary_pos_emb"}
    monkeypatch.setattr(npu_table, "KERNEL_WRITES", hidden)
    npu_schema._parsed.cache_clear()
    try:
        name, code = _generated(tmp_path, "portable")
    finally:
        npu_schema._parsed.cache_clear()
    body = method_source(code, "rotary_writes")
    assert body.index("npu_apply_rotary_pos_emb") < body.rindex("runtime.wait(")
    x = torch.randn(3, 4)
    try:
        with pytest.raises(StreamRaceError, match="read on stream 'side' .* written in place on stream 'default'"):
            run_generated(name, tmp_path / "out", "portable", lambda: (x.clone(),), method="rotary_writes")
    finally:
        sys.modules.pop("torch_npu", None)
