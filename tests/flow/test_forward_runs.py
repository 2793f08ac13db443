"""``self.sub._call_impl(x)``, ``_wrapped_call_impl`` and ``_slow_forward`` run ``Sub.forward``, as ``self.sub(x)``.

``Sub.forward`` adds 1 to its buffer ``w`` in place while a side call still reads ``self.sub.w``. Read as methods of
``nn.Module`` writing nothing, these calls wrote nothing (main: "'self.model.sub.w' is read on stream 'side' ... and
written in place on stream 'default' with no wait in between"). torch's sources say they run the object's own
``forward`` (``torch_forward_runs.py``, the table's ``f``), so they are read as ``forward``: the call waits for the
side call, or runs after it on the caller's stream. A class of torch is asked the same way (a batch norm's
``_call_impl`` counts its batches in place), and so is the object's own ``self._call_impl(z)`` (its writes were
named ``self._call_impl.own``, under the method's name: ``call_state_writes._method_of_object``); a ``forward`` that
only reads keeps the overlap, and a side call writing what the caller's ``_call_impl`` reads is joined before it.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.torch_module_methods import runs_forward, torch_method_writes
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.full((3,), 2.0))

    def forward(self, x):
        self.w.add_(1)
        return x * self.w


class Reads(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.full((3,), 2.0))

    def forward(self, x):
        return x * self.w


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.reads = Reads()
        self.norm = nn.BatchNorm1d(3)
        self.register_buffer("own", torch.full((3,), 5.0))

    def forward(self, x):
        self.own.add_(1)
        return x * self.own

    @on_stream("side")
    def side_own(self, x):
        return x * self.own

    @on_stream("side")
    def side(self, x):
        return x * self.sub.w

    @on_stream("side")
    def side_reads(self, x):
        return x * self.reads.w

    @on_stream("side")
    def side_stats(self, x):
        return x * self.norm.running_mean

    @on_stream("side")
    def side_writes(self, x):
        self.reads.w.mul_(2)
        return x * 2

    def call_impl(self, x):
        y = self.side(x)
        z = self.sub._call_impl(x)
        return y + z

    def wrapped(self, x):
        y = self.side(x)
        z = self.sub._wrapped_call_impl(x)
        return y + z

    def slow(self, x):
        y = self.side(x)
        z = self.sub._slow_forward(x)
        return y + z

    def torch_layer(self, x):
        y = self.side_stats(x)
        z = self.norm._call_impl(x)
        return y + z

    def own_object(self, x):
        y = self.side_own(x)
        z = x * 5
        w = self._call_impl(z)
        return y + z + w

    def reads_kept(self, x):
        y = self.side_reads(x)
        z = x * 5
        w = self.reads._call_impl(z)
        return y + z + w

    def read_waits(self, x):
        y = self.side_writes(x)
        z = x * 5
        w = self.reads._call_impl(z)
        return y + z + w
""" + caller_source()

WRITES = {
    "call_impl": "z = self.sub._call_impl(x)",
    "wrapped": "z = self.sub._wrapped_call_impl(x)",
    "slow": "z = self.sub._slow_forward(x)",
    "torch_layer": "z = self.norm._call_impl(x)",
    "read_waits": "w = self.reads._call_impl(z)",
    "own_object": "w = self._call_impl(z)",
}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_the_table_marks_what_runs_forward() -> None:
    for method in ("_call_impl", "_wrapped_call_impl", "_slow_forward"):
        assert runs_forward(method), method
    for method in ("state_dict", "buffers", "compile", "register_forward_hook", "forward"):
        assert not runs_forward(method), method
    assert torch_method_writes("BatchNorm1d", "_call_impl") and not torch_method_writes("Linear", "_call_impl")


@pytest.mark.parametrize("method", WRITES)
def test_the_call_runs_after_the_side_call(method: str) -> None:
    body = _body(method)
    line = body.index(WRITES[method])
    assert "runtime.stream(" not in body or body.rindex("runtime.wait(", 0, line) > body.index("runtime.stream("), body


def test_a_forward_that_only_reads_keeps_the_overlap() -> None:
    body = _body("reads_kept")
    assert body.index('runtime.stream("side"') < body.index("w = self.reads._call_impl(z)") < body.rindex("wait("), body


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("method", [*WRITES, "reads_kept"])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    eager = target == "cuda"  # its events are made on a first eager step
    expected = run_checked(reference, target, lambda m: m.Caller(method).eval(), (x,), eager_first=eager)
    got = run_checked(code, target, lambda m: m.Caller(method).eval(), (x,), eager_first=eager)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
