"""``torch.batch_norm(..., True, ...)`` writes the running stats it is given, though ATen's schema marks none.

``torch.batch_norm(h, None, None, self.rm, self.rv, True, 0.1, 1e-5, False)`` updates ``self.rm`` and ``self.rv``
in place: its kernel (``native_batch_norm``, whose schema leaves ``running_mean`` and ``running_var`` plain too)
writes them through slots no ``Tensor(a!)`` marks. On main ``foreign_writes`` held the call to the schema and said it
wrote nothing, so a side call reading ``self.rm`` was not joined before the caller's norm (and the caller's read was
not joined after a side call's norm): the race checker said "read on stream 'side' ... and written in place on stream
'default' with no wait in between". What a public function of ``torch`` writes through plain slots is now read from
running it at table-build time (``aten_kernel_probe.py``, the table ``aten_kernel_writes_table.py``):
``batch_norm`` and ``native_batch_norm`` write their running stats where ``training`` is given, ``instance_norm``
where ``use_input_stats`` is, ``batch_norm_update_stats`` always; ``training=False`` keeps the overlap. The same op
called by its overload (``torch.ops.aten.batch_norm.default``) writes the same.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.aten_kernel_writes_build import TABLE, build
from codegen.lower.flow.aten_kernel_writes_table import KERNEL_WRITES
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rm", torch.full((3,), 2.0))
        self.register_buffer("rv", torch.full((3,), 3.0))

    @on_stream("side")
    def side_stats(self, x):
        return x * self.rm + self.rv

    @on_stream("side")
    def side_norm(self, x):
        h = x * 2
        return torch.batch_norm(h, None, None, self.rm, self.rv, True, 0.1, 1e-5, False) + x

    def caller_norm(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = torch.batch_norm(z, None, None, self.rm, self.rv, True, 0.1, 1e-5, False)
        return y + z + w

    def caller_native(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = torch.native_batch_norm(z, None, None, self.rm, self.rv, True, 0.1, 1e-5)[0]
        return y + z + w

    def caller_overload(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = torch.ops.aten.batch_norm.default(z, None, None, self.rm, self.rv, True, 0.1, 1e-5, False)
        return y + z + w

    def caller_instance(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = torch.instance_norm(z.t().unsqueeze(0), None, None, self.rm, self.rv, True, 0.1, 1e-5, False)[0].t()
        return y + z + w

    def caller_update_stats(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = torch.batch_norm_update_stats(z, self.rm, self.rv, 0.1)[0]
        return y + z + w

    def norm_on_side(self, x):
        y = self.side_norm(x)
        z = x * 5
        w = z * self.rm
        return y + z + w

    def caller_eval(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = torch.batch_norm(z, None, None, self.rm, self.rv, False, 0.1, 1e-5, False)
        return y + z + w
""" + caller_source()

WAITS = {
    "caller_norm": "w = torch.batch_norm(",
    "caller_native": "w = torch.native_batch_norm(",
    "caller_overload": "w = torch.ops.aten.batch_norm.default(",
    "caller_instance": "w = torch.instance_norm(",
    "caller_update_stats": "w = torch.batch_norm_update_stats(",
    "norm_on_side": "w = z * self.rm",
}
APART = {"caller_eval": "w = torch.batch_norm("}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_the_table_is_torchs() -> None:
    assert TABLE.read_text(encoding="utf-8") == build(), "run: python -m codegen.lower.flow.aten_kernel_writes_build"


def test_the_table_holds_what_the_kernels_write() -> None:
    assert KERNEL_WRITES["batch_norm"].endswith("| running_mean:training running_var:training")
    assert KERNEL_WRITES["native_batch_norm"].endswith("| running_mean:training running_var:training")
    assert KERNEL_WRITES["instance_norm"].endswith("| running_mean:use_input_stats running_var:use_input_stats")
    assert KERNEL_WRITES["batch_norm_update_stats"].endswith("| running_mean running_var")
    assert "layer_norm" not in KERNEL_WRITES and "_native_batch_norm_legit" not in KERNEL_WRITES


@pytest.mark.parametrize("method", WAITS)
def test_the_write_waits_for_the_pending_call(method: str) -> None:
    body = _body(method)
    before = body[: body.index(WAITS[method])]
    assert re.search(r'runtime\.wait\("m\.Model\.side_\w+\.join"\)', before), body


@pytest.mark.parametrize("method", APART)
def test_training_false_keeps_the_overlap(method: str) -> None:
    body = _body(method)
    assert body.index('runtime.stream("side"') < body.index(APART[method]) < body.rindex("runtime.wait("), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*WAITS, *APART])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
