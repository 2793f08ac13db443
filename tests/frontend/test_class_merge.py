"""A class's decorators and its forward's are one stream function, as in eager mode."""

from __future__ import annotations

import pytest

from frontend_util import check, codes, load, transform

_SOURCE = """
import torch
from torch import nn

from npudsl import core_limit, keep_output, on_stream


@on_stream("expert")
@keep_output
class Expert(nn.Module):
    @core_limit(8, 16)
    def forward(self, x):
        return torch.relu(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.expert = Expert()

    @core_limit(16, 32)
    def forward(self, x):
        y = self.expert(x)
        z = x * 2
        return y + z
"""


def test_class_level_decorators_are_kept_when_forward_has_its_own() -> None:
    code, diagnostics = transform(_SOURCE)
    assert [d for d in diagnostics if d.severity.value == "error"] == []
    forward = code.split("class Expert")[1].split("class Model")[0]
    assert "npu_stream_switch" not in forward  # the call site switches: the body is the user's
    assert "torchair.scope.limit_core_num(8, 16)" in forward
    caller = code.split("class Model")[1]
    assert 'torchair.scope.npu_stream_switch("expert", 0)' in caller
    assert "torch.ops.air.tagged_event_wait(_EXPERT_JOIN)" in caller
    assert transform(code)[0] == code


def test_the_same_decorator_on_class_and_forward_is_npd107() -> None:
    source = _SOURCE.replace("    @core_limit(8, 16)\n", '    @on_stream("other")\n')
    line = source.lstrip("\n").splitlines().index('    @on_stream("other")') + 1
    code, diagnostics = transform(source)
    assert code.strip() == source.strip()
    assert f"{line}:6 NPD107" in codes(diagnostics)
    assert codes(check(source)) == codes(diagnostics)


def test_portable_output_runs_like_the_undecorated_model() -> None:
    torch = pytest.importorskip("torch")
    module = load(transform(_SOURCE, target="portable")[0], "class_merge_portable")
    x = torch.randn(3, 4)
    assert torch.equal(module.Model()(x), torch.relu(x) + x * 2)
