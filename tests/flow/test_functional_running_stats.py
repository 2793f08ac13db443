"""``F.batch_norm`` and ``F.instance_norm`` write the running stats they are given; ``F.gaussian_nll_loss`` does not
write its ``var``.

``F.batch_norm(h, self.rm, self.rv, training=True)`` updates ``self.rm`` and ``self.rv`` in place, though ATen's
``batch_norm`` schema leaves ``running_mean`` unmarked (its kernel, ``native_batch_norm``, writes through a plain
slot). On main a side call reading ``self.rm`` while the caller ran the norm (or the reverse) was not joined: the race
checker said "read on stream 'side' ... and written in place on stream 'default' with no wait in between". What a
function of ``torch.nn.functional`` writes is now also read from running it (``functional_probe.py``): the running
stats are written where ``training`` (``use_input_stats`` for ``instance_norm``) is given, so ``training=False``
keeps the overlap; ``nn.InstanceNorm1d(3, track_running_stats=True)``'s ``forward`` hands its running stats to
``F.instance_norm``, and writes them too. ``F.gaussian_nll_loss(input, target, var)`` clamps ``var.clone()``, a copy
of its own (``functional_local_copies.py``): a call reading ``var`` waits for nothing (dynamo cannot capture it whole,
``torch.any(var < 0)`` decides a ``raise``, so its numerics are checked eagerly).
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.torch_functional_table import FUNCTIONS
from npudsl.testing import standins
from npudsl.testing.targets import load, run_checked

SOURCE = """\
import torch
from torch import nn
import torch.nn.functional as F
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rm", torch.full((3,), 2.0))
        self.register_buffer("rv", torch.full((3,), 3.0))
        self.var = nn.Parameter(torch.full((2, 3), 1e-9), requires_grad=False)
        self.norm = nn.InstanceNorm1d(3, track_running_stats=True)

    @on_stream("side")
    def side_stats(self, x):
        return x * self.rm + self.rv

    @on_stream("side")
    def side_norm(self, x):
        h = x * 2
        return F.batch_norm(h, self.rm, self.rv, training=True) + x

    @on_stream("side")
    def side_instance(self, x):
        h = x * 2
        return F.instance_norm(h.t().unsqueeze(0), self.rm, self.rv, use_input_stats=True)[0].t() + x

    @on_stream("side")
    def side_var(self, x):
        return x * self.var

    @on_stream("side")
    def side_module_stats(self, x):
        return x * self.norm.running_mean

    def caller_module(self, x):
        y = self.side_module_stats(x)
        z = x * 5
        w = self.norm(z.t().unsqueeze(0))[0].t()
        return y + z + w

    def caller_norm(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = F.batch_norm(z, self.rm, self.rv, training=True)
        return y + z + w

    def caller_instance(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = F.instance_norm(z.t().unsqueeze(0), self.rm, self.rv, use_input_stats=True)[0].t()
        return y + z + w

    def norm_on_side(self, x):
        y = self.side_norm(x)
        z = x * 5
        w = z * self.rm
        return y + z + w

    def instance_on_side(self, x):
        y = self.side_instance(x)
        z = x * 5
        w = z * self.rv
        return y + z + w

    def caller_eval(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = F.batch_norm(z, self.rm, self.rv, training=False)
        return y + z + w

    def caller_loss(self, x):
        y = self.side_var(x)
        z = x * 5
        w = F.gaussian_nll_loss(z, x, self.var, reduction="none")
        return y + z + w
""" + caller_source()

WAITS = {
    "caller_norm": "w = F.batch_norm(",
    "caller_instance": "w = F.instance_norm(",
    "norm_on_side": "w = z * self.rm",
    "instance_on_side": "w = z * self.rv",
    "caller_module": "w = self.norm(",
}
APART = {"caller_eval": "w = F.batch_norm(", "caller_loss": "w = F.gaussian_nll_loss("}
UNTRACEABLE = {"caller_loss"}  # ``gaussian_nll_loss`` tests ``torch.any(var < 0)``: no whole graph in this torch


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_the_table_reads_the_running_stats() -> None:
    assert "running_mean:training running_var:training" in FUNCTIONS["batch_norm"]
    assert "running_mean:use_input_stats running_var:use_input_stats" in FUNCTIONS["instance_norm"]
    assert "gaussian_nll_loss" not in FUNCTIONS


@pytest.mark.parametrize("method", WAITS)
def test_the_write_waits_for_the_pending_call(method: str) -> None:
    body = _body(method)
    before = body[: body.index(WAITS[method])]
    assert re.search(r'runtime\.wait\("m\.Model\.side_\w+\.join"\)', before), body


@pytest.mark.parametrize("method", APART)
def test_what_writes_nothing_keeps_the_overlap(method: str) -> None:
    body = _body(method)
    assert body.index('runtime.stream("side"') < body.index(APART[method]) < body.rindex("runtime.wait("), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WAITS, *(m for m in APART if m not in UNTRACEABLE)])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


@pytest.mark.parametrize("method", sorted(UNTRACEABLE))
def test_eager_numerics(method: str) -> None:
    """What dynamo cannot capture whole runs eagerly: the generated code computes what the model does."""
    x = torch.randn(2, 3)
    code = transform_source(SOURCE, path="m.py", target="portable")
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target="portable")
    with standins.installed("portable"):
        got = load(code, "portable").Caller(method)(x)
        expected = load(reference, "portable").Caller(method)(x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
