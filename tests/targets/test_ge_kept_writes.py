"""GE keeps a tensor for a stream that writes it in place, as it keeps one for a stream that reads it.

GE compiles the graph aot_autograd's functionalization makes: ``scales.copy_(s)`` on a side stream is there a
functional ``aten.copy(scales, s)`` inside the stream's scope, taking the main stream's ``scales`` as an input, a
data edge GE orders and plans memory for (and, where nothing reads the new value, no op at all). The GE model of
the stand-ins (``npudsl/testing/standins/_data_edges.py``) kept a value only for a reading stream, so it found a
race in code GE runs safely: the main stream allocating after a side stream's write into a tensor it then drops
(``tests/flow/test_if_in_block.py``'s ``grouped`` case). A real race is still found: with
``data_edges="explicit"`` a write issued with no wait for the producer, and the same schedule on streams with a
caching allocator (``portable``) with no ``record_stream``.
"""

from __future__ import annotations

import pytest
import torch

from npudsl.errors import StreamRaceError
from npudsl.testing.targets import run_checked, trace_graph

GE = """\
import torch
import torchair


class Scales(torch.nn.Module):
    def forward(self, x):
        scales = x[:, :1] * 0
        token = torchair.ops.record()
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.ops.wait([token])
            scales.copy_(x.sum(-1, keepdim=True))
        return x * 3 + 1
"""

PORTABLE = """\
import torch
from npudsl import runtime


class Scales(torch.nn.Module):
    def forward(self, x):
        scales = x[:, :1] * 0
        runtime.record("fork")
        with runtime.stream("side", 0):
            runtime.wait("fork")
            scales.copy_(x.sum(-1, keepdim=True))
        return x * 3 + 1
"""

X = torch.arange(6.0).reshape(2, 3)


def _model(module: object) -> torch.nn.Module:
    return module.Scales()  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("data_edges", ["engine", "explicit"])
def test_ge_keeps_a_tensor_written_in_place_on_a_side_stream_then_dropped(data_edges: str) -> None:
    assert torch.equal(run_checked(GE, "ge", _model, (X,), data_edges=data_edges), X * 3 + 1)


def test_the_graph_ge_compiles_writes_as_a_functional_op_that_takes_the_old_value() -> None:
    read_after = GE.replace("return x * 3 + 1", "return x * 3 + scales")
    trace = trace_graph(read_after, "ge", _model, (X,))
    assert torch.equal(trace.outputs, X * 3 + X.sum(-1, keepdim=True))
    nodes = list(trace.aot[0].graph.nodes)
    (copy,) = (n for n in nodes if n.target is torch.ops.aten.copy.default)
    (enter,) = (n for n in nodes if n.target is torch.ops.standin_air.scope_enter.default)
    (leave,) = (n for n in nodes if n.target is torch.ops.standin_air.scope_exit.default)
    old = copy.args[0]
    assert old.target is torch.ops.aten.mul.Tensor and nodes.index(old) < nodes.index(enter)  # the main's value
    assert nodes.index(enter) < nodes.index(copy) < nodes.index(leave)  # a use of it on the side stream
    dropped = trace_graph(GE, "ge", _model, (X,)).aot[0]
    assert not dropped.graph.find_nodes(op="call_function", target=torch.ops.aten.copy.default)


def test_the_explicit_mode_still_reports_a_write_issued_before_its_producer_is_ordered() -> None:
    unwaited = GE.replace("            torchair.ops.wait([token])\n", "")
    where = r"tensor 'scales' is made on stream 'default' at .* and written in place on stream 'side'"
    with pytest.raises(StreamRaceError, match=where):
        run_checked(unwaited, "ge", _model, (X,), data_edges="explicit")


def test_a_caching_allocator_still_needs_the_keep() -> None:
    with pytest.raises(StreamRaceError, match=r"then dropped, and stream 'default' allocates again"):
        run_checked(PORTABLE, "portable", _model, (X,))
    wait = 'runtime.wait("fork")'
    kept = PORTABLE.replace(wait, wait + '\n            runtime.record_stream(scales, "side")')
    assert torch.equal(run_checked(kept, "portable", _model, (X,)), X * 3 + 1)
