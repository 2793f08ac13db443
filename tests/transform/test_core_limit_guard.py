"""A core limit without a guard of its own is off when its stream's ``when=`` is false (transform and eager)."""

from __future__ import annotations

import torch
from torch import nn

from codegen.driver.api import transform_source
from npudsl import core_limit, on_stream, runtime

SOURCE = """
from torch import nn
from npudsl import core_limit, on_stream


@on_stream("side", when="self.multistream")
@core_limit(8, 16)
class Expert(nn.Module):
    def forward(self, x):
        return x * 2
"""


def test_the_generated_limit_reads_the_streams_guard() -> None:
    code = transform_source(SOURCE, path="m.py", target="aclgraph")
    assert "torchair.scope.limit_core_num(8, 16) if self.multistream else nullcontext()" in code


@on_stream("side", when="self.multistream")
@core_limit(8, 16)
class _Eager(nn.Module):
    def __init__(self, multistream: bool) -> None:
        super().__init__()
        self.multistream = multistream

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def test_eager_code_limits_cores_only_when_the_stream_is_on(monkeypatch) -> None:
    seen: list[tuple[int, int]] = []
    real = runtime.core_limit

    def spy(aicore: int, vector: int):  # type: ignore[no-untyped-def]
        seen.append((aicore, vector))
        return real(aicore, vector)

    monkeypatch.setattr(runtime, "core_limit", spy)
    _Eager(False)(torch.ones(2))
    assert seen == []
    _Eager(True)(torch.ones(2))
    assert seen == [(8, 16)]
