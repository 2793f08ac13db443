"""The probe runs the functions of ``torch.nn.functional`` that take indices, lists of ints and batched inputs, and
one it ran writes only what its row says.

On main the probe made float ``2 x 3 x 4`` tensors only, and gave a required list of ints (``kernel_size``,
``normalized_shape``, ``pad``) no value: about 40 public functions were never run. A function the build neither ran
nor finds an ATen op of its name for (``F.lp_pool2d``, ``F.fold``, ``F.adaptive_max_pool1d_with_indices``) may
write every argument, so the caller's ``F.lp_pool2d(t, 2, 1)`` waited for a side call still reading ``t``. The
kinds now come from the annotations (``functional_kinds.py``: int lists with candidates, ``float | None`` given
1.0), the runs try int64 indices and batched first tensors (``functional_samples.py``): 73 of the 89 public
functions run (16 cannot: ``interpolate``/``upsample*`` and ``fractional_max_pool*`` need one of two optional
arguments, ``affine_grid``, ``ctc_loss``, ``embedding_bag``, ``max_unpool3d`` need shapes tied to other arguments,
``grouped_mm``/``scaled_mm``/``scaled_grouped_mm`` dtypes the CPU lacks, ``multi_head_attention_forward`` and
``linear_cross_entropy`` more than the kinds make, ``assert_int_or_pair`` takes no tensor). None of the new runs
writes an argument beyond the body's reading (``F.embedding`` writes ``weight`` under ``max_norm``, as its body
says), so the new facts are reads: the overlap is kept, race-free.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.torch_functional_table import FUNCTIONS, RAN
from npudsl.testing.targets import run_checked

MODEL = """\
import torch
from torch import nn
import torch.nn.functional as F
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 3

    def caller(self, x):
        t = x * 2
        y = self.side(t)
        w = CALL
        return y.sum() + w.sum()
"""
CALLS = {
    "lp_pool2d": "F.lp_pool2d(t, 2, 1)",
    "fold": "F.fold(t, (2, 2), (1, 1))",
    "adaptive_max_pool1d": "F.adaptive_max_pool1d_with_indices(t, 2)[0]",
}
JOIN = 'runtime.wait("m.Model.side.join")'


def _source(case: str) -> str:
    return MODEL.replace("CALL", CALLS[case]) + caller_source()


def test_the_probe_runs_what_annotations_let_it_make() -> None:
    assert len(RAN) >= 73
    for name in ("embedding", "layer_norm", "nll_loss", "pad", "fold", "lp_pool2d", "max_unpool2d", "grid_sample"):
        assert name in RAN, name
    assert FUNCTIONS["embedding"].endswith("| weight:max_norm")


@pytest.mark.parametrize("case", CALLS)
def test_a_function_the_build_ran_keeps_the_overlap(case: str) -> None:
    body = method_source(transform_source(_source(case), path="m.py", target="portable"), "caller")
    assert body.index("w = F.") < body.index(JOIN), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("case", CALLS)
def test_race_free(case: str, target: str) -> None:
    source = _source(case)
    x = torch.randn(1, 4, 4)
    reference = transform_source(source.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller("caller"), (x,))
    got = run_checked(transform_source(source, path="m.py", target=target), target, lambda m: m.Caller("caller"), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
