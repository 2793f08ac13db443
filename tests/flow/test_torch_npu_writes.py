"""A torch_npu op writes the arguments its schema types ``Tensor(a!)`` (``codegen/lower/flow/npu_schema.py``).

Before, ``torch_npu.npu_rms_norm(x, w)`` was a function the run cannot read, taken to write every argument: a
pending side call reading ``x`` was joined before it, and vllm-ascend code (which calls torch_npu ops everywhere)
overlapped less than by hand. An op whose schema writes an input (``npu_scatter_nd_update_``), or whose kernel
writes one its schema leaves plain (``npu_kv_rmsnorm_rope_cache``), and a name the table lacks, still join
first. Transformed only: torch_npu is never imported.
"""

from __future__ import annotations

import ast

import pytest

from codegen.driver.api import transform_source
from codegen.lower.flow.foreign_writes import foreign_writes
from codegen.lower.flow.npu_schema import Param, written_params

SOURCE = """\
import torch
import torch_npu
from torch import nn

from npudsl import on_stream


class Shared(nn.Module):
    @on_stream("side")
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.shared = Shared()

    def forward(self, x: torch.Tensor, w: torch.Tensor, i: torch.Tensor) -> torch.Tensor:
        y = self.shared(x)
        CALL
        z = w + 1
        return y + z
"""
JOIN = 'runtime.wait("m.Shared.forward.join")'


def _overlaps(call: str) -> bool:
    """The side call still runs when ``call`` is issued (it is joined after it; with no join, it ran on the
    caller's stream)."""
    code = transform_source(SOURCE.replace("CALL", call), path="m.py", target="portable")
    body = code[code.index("class Block") :]
    op = call.split("(")[0].split(" = ")[-1] + "("
    return JOIN in body and body.index(op) < body.index(JOIN)


@pytest.mark.parametrize(
    "call",
    [
        "n, r = torch_npu.npu_rms_norm(x, w)",
        "n, r = torch.ops.npu.npu_rms_norm(x, w)",
        "n, r = torch.ops.npu.npu_rms_norm.default(x, w)",
        "q, s = torch_npu.npu_dynamic_quant(x)",
        "torch_npu.npu_scatter_nd_update_(w, i, x)",
        "torch_npu.npu_scatter_nd_update_(self=w, indices=i, updates=x)",
    ],
)
def test_an_op_that_does_not_write_x_overlaps(call: str) -> None:
    assert _overlaps(call)


@pytest.mark.parametrize(
    "call",
    [
        "torch_npu.npu_scatter_nd_update_(x, i, w)",
        "torch.ops.npu.npu_scatter_nd_update_.default(x, i, w)",
        "torch_npu.npu_scatter_nd_update_(indices=i, updates=w, self=x)",
        "torch_npu.npu_scatter_pa_kv_cache(w, w, x, w, i)",
        "torch_npu.npu_kv_rmsnorm_rope_cache(w, w, w, w, i, x, w)",
        "torch_npu.npu_apply_rotary_pos_emb(x, w, w, w)",
        "torch_npu.not_an_op(w, x)",
        "torch.ops.npu.npu_rms_norm.no_such_overload(x, w)",
        "torch_npu.npu_scatter_nd_update_(*[w, i, x])",
    ],
)
def test_an_op_that_may_write_x_joins_first(call: str) -> None:
    assert not _overlaps(call)


def _writes(call: str) -> frozenset[str]:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    dotted = ast.unparse(node.func).split(".")
    return foreign_writes(node, dotted)


@pytest.mark.parametrize(
    ("call", "written"),
    [
        ("torch_npu.npu_rms_norm(x, w)", set()),
        ("torch_npu.npu_scatter_pa_kv_cache(k, v, kc, vc, slots)", {"kc", "vc"}),
        ("torch_npu.npu_scatter_pa_kv_cache(k, v, value_cache=vc, key_cache=kc, slot_mapping=s)", {"kc", "vc"}),
        ("torch.ops.npu.npu_scatter_pa_cache.value(k, s, key_cache=kc[0])", {"kc"}),
        ("torch_npu.npu_fused_infer_attention_score(q, k, v)", set()),
        ("torch_npu.npu_fused_infer_attention_score.out(q, k, v, attention_out=o, softmax_lse=l)", {"o", "l"}),
        ("torch_npu.npu_scatter_list_([a, b], i, u)", {"a", "b"}),
        ("torch_npu.npu_rms_norm(*xs)", set()),
        ("torch_npu.npu_kv_rmsnorm_rope_cache(kv, g, c, s, i, kc, vc)", {"kc", "vc"}),  # its kernel: KERNEL_WRITES
        ("torch_npu.npu_apply_rotary_pos_emb(q, k, c, s)", {"q", "k"}),  # its aclnn call's queryRef, keyRef
    ],
)
def test_what_a_call_writes(call: str, written: set[str]) -> None:
    assert _writes(call) == written


def test_the_schema_read() -> None:
    assert written_params("npu_rms_norm") == ((),)
    assert written_params("npu_scatter_nd_update_") == ((Param("self", 0),),)
    assert written_params("npu_scatter_pa_cache", "value") == ((Param("key_cache", None),),)
    assert written_params("npu_scatter_pa_cache", "default") is None  # only ``.value`` is declared
    assert written_params("npu_apply_rotary_pos_emb") == ((Param("query", 0), Param("key", 1)),)
    assert written_params("not_an_op") is None


@pytest.mark.parametrize(
    ("call", "overlaps"),
    [
        ("n, r = npu_rms_norm(x, w)", True),
        ("n, r = tnpu.npu_rms_norm(x, w)", True),
        ("scatter(w, i, x)", True),
        ("scatter(x, i, w)", False),
    ],
)
def test_the_op_imported_by_name_or_alias(call: str, overlaps: bool) -> None:
    imports = "import torch_npu\nfrom torch_npu import npu_rms_norm, npu_scatter_nd_update_ as scatter\n"
    source = SOURCE.replace("import torch_npu\n", imports + "import torch_npu as tnpu\n")
    code = transform_source(source.replace("CALL", call), path="m.py", target="portable")
    body = code[code.index("class Block") :]
    op = call.split("(")[0].split(" = ")[-1] + "("
    assert (JOIN in body and body.index(op) < body.index(JOIN)) == overlaps


SIDE = """\
import torch
import torch_npu
from torch import nn

from npudsl import on_stream


class Shared(nn.Module):
    @on_stream("side")
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        n, _ = BODY
        return n * 2


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.shared = Shared()

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        y = self.shared(x, w)
        z = x + 1
        return y + z
"""


@pytest.mark.parametrize(
    ("body", "overlaps"),
    [("torch_npu.npu_rms_norm(x, w)", True), ("torch_npu.npu_kv_rmsnorm_rope_cache(w, w, w, w, w, x, w)[:2]", False)],
)
def test_a_side_call_whose_body_calls_the_op(body: str, overlaps: bool) -> None:
    """The caller reads ``x`` after the fork: it waits only where the side body's op may write ``x``."""
    code = transform_source(SIDE.replace("BODY", body), path="m.py", target="portable")
    caller = code[code.index("class Block") :]
    assert (JOIN in caller and caller.index("z = x + 1") < caller.index(JOIN)) == overlaps
