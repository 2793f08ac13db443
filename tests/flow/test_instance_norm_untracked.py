"""An instance norm made without running stats writes nothing: a call through it keeps its overlap.

``nn.InstanceNorm1d(3)`` (``track_running_stats=False``, the default) hands ``self.running_mean`` to
``F.instance_norm``, which updates it in place where it is a tensor; but ``_NormBase.__init__`` registers it as None
unless ``track_running_stats``, so its ``forward`` writes nothing. On main the table marked ``_InstanceNorm.forward``
as writing whatever the layer was made with (the guard ``self.training or not self.track_running_stats`` is no
constructor parameter), so the caller's own ``self.norm(z)`` waited for a side call through the same layer, as if both
wrote its running stats. The guard is now read from the constructor (``state_made_none.py``: the attribute is None
unless ``track_running_stats``; the table marks ``w:track_running_stats@4=``): ``nn.InstanceNorm1d(3)`` and
``nn.InstanceNorm2d(3, track_running_stats=False)`` overlap, ``nn.InstanceNorm1d(3, track_running_stats=True)`` (and
``nn.LazyInstanceNorm1d``, numbered by another ``__init__``) still wait. Race checker and numerics on each.
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
    "untracked_1d": ("nn.InstanceNorm1d(3)", False),
    "untracked_2d": ("nn.InstanceNorm2d(2, track_running_stats=False)", False),
    "tracked_1d": ("nn.InstanceNorm1d(3, track_running_stats=True)", True),
    "tracked_positional": ("nn.InstanceNorm1d(3, 1e-5, 0.1, False, True)", True),
    "lazy": ("nn.LazyInstanceNorm1d(track_running_stats=False)", True),
}


def _source(case: str) -> str:
    return MODEL.replace("LAYER", CASES[case][0]) + caller_source()


def test_the_table_reads_the_constructor() -> None:
    assert METHODS["_InstanceNorm.forward"] == "w:track_running_stats@4="
    assert METHODS["_BatchNorm.forward"] == "w:track_running_stats@4"  # test_batch_norm_untracked.py


@pytest.mark.parametrize("case", CASES)
def test_the_caller_waits_only_where_the_stats_are_tensors(case: str) -> None:
    body = method_source(transform_source(_source(case), path="m.py", target="portable"), "caller")
    joined = body.index('runtime.wait("m.Model.side.join")') < body.index("w = self.norm(z)")
    assert joined is CASES[case][1], body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("case", [c for c in CASES if c != "lazy"])
def test_race_free(case: str, target: str) -> None:
    source = _source(case)
    x = torch.randn(2, 3, 4) if "2d" not in case else torch.randn(2, 2, 3, 4)
    reference = transform_source(source.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller("caller"), (x,))
    got = run_checked(transform_source(source, path="m.py", target=target), target, lambda m: m.Caller("caller"), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
