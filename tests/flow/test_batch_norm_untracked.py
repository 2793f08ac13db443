"""A batch norm made without running stats writes nothing: a call through it keeps its overlap.

``nn.BatchNorm1d(3, track_running_stats=False)``'s ``forward`` (``_BatchNorm.forward``) counts its batches in place
(``self.num_batches_tracked.add_(1)``) and hands its running stats to ``F.batch_norm``; but ``_NormBase.__init__``
registers all three as None unless ``track_running_stats``, so it writes nothing, in training too. On main the table
marked ``_BatchNorm.forward`` as writing whatever the layer was made with (``w``: the in-place method was read as a
write whatever its receiver holds), so the caller's own ``self.norm(z)`` waited for a side call through the same
layer, as if both wrote its running stats. The in-place method's receiver is now read as ``F.instance_norm``'s
argument is (``method_state_writes.py`` with ``state_made_none.py``: the table marks ``w:track_running_stats@4``, the
fifth constructor parameter, default True): ``nn.BatchNorm1d(3, track_running_stats=False)`` and the positional
``nn.BatchNorm1d(3, 1e-5, 0.1, True, False)`` overlap; ``nn.BatchNorm1d(3)`` still waits (eval is not assumed: the
module may be training, and then it updates its stats), and so does ``nn.LazyBatchNorm1d`` (made by another
``__init__``). The models run in training; race checker and numerics on each.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.torch_module_methods_table import METHODS
from npudsl.testing.targets import run_checked

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = LAYER

    @on_stream("side")
    def side(self, x):
        return self.norm(x * 2)

    def caller(self, x):
        y = self.side(x)
        z = x * 5
        w = self.norm(z)
        return y + z + w
"""
CASES = {  # the layer, whether the caller's own call waits for the side call
    "untracked_1d": ("nn.BatchNorm1d(3, track_running_stats=False)", False),
    "untracked_positional": ("nn.BatchNorm1d(3, 1e-5, 0.1, True, False)", False),
    "untracked_2d": ("nn.BatchNorm2d(2, affine=False, track_running_stats=False)", False),
    "tracked_1d": ("nn.BatchNorm1d(3)", True),
    "tracked_given": ("nn.BatchNorm1d(3, track_running_stats=True)", True),
    "lazy": ("nn.LazyBatchNorm1d(track_running_stats=False)", True),
}


def _source(case: str) -> str:
    return MODEL.replace("LAYER", CASES[case][0]) + caller_source()


def test_the_table_reads_the_constructor() -> None:
    assert METHODS["_BatchNorm.forward"] == "w:track_running_stats@4"
    assert METHODS["_NormBase.reset_running_stats"] == "w:track_running_stats@4"
    assert METHODS["_InstanceNorm.forward"] == "w:track_running_stats@4="


@pytest.mark.parametrize("case", CASES)
def test_the_caller_waits_only_where_the_stats_are_tensors(case: str) -> None:
    body = method_source(transform_source(_source(case), path="m.py", target="portable"), "caller")
    joined = body.index('runtime.wait("m.Model.side.join")') < body.index("w = self.norm(z)")
    assert joined is CASES[case][1], body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("case", [c for c in CASES if c != "lazy"])
def test_race_free(case: str, target: str) -> None:
    source = _source(case)
    x = torch.randn(4, 3) if "2d" not in case else torch.randn(2, 2, 3, 4)
    reference = transform_source(source.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller("caller"), (x,))
    got = run_checked(transform_source(source, path="m.py", target=target), target, lambda m: m.Caller("caller"), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
