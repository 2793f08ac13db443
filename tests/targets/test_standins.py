"""Generated code of every target traces whole under the stand-ins, and the race checker judges it."""

from __future__ import annotations

import sys
import textwrap

import pytest
import torch

from npudsl.errors import StreamRaceError
from npudsl.runtime._ops import OPS
from npudsl.testing import standins
from npudsl.testing.targets import load, run_checked, trace_graph
from standin_sources import JOIN, SOURCES

X = (torch.arange(4.0),)
EXPECTED = X[0].cos() + X[0]
EAGER_FIRST = {"cuda": True, "npugraph_ex": True}  # their goldens make streams and events at first use


class Pair(torch.nn.Module):
    """Two layers of one generated class: events and streams are the class's, not the instance's."""

    def __init__(self, layer: type[torch.nn.Module]) -> None:
        super().__init__()
        self.first, self.second = layer(), layer()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.first(x))


def _runtime_ops(gm: torch.fx.GraphModule) -> list[tuple[str, tuple]]:
    names = {target: name for name, packet in OPS.items() for target in (packet, packet.default)}
    return [(names[n.target], n.args) for n in gm.graph.nodes if n.op == "call_function" and n.target in names]


@pytest.mark.parametrize("target", list(SOURCES))
def test_synchronized_code_traces_whole_once_and_passes(target: str) -> None:
    trace = trace_graph(
        SOURCES[target], target, lambda m: m.AtOnce(), X, calls=2, eager_first=EAGER_FIRST.get(target, False)
    )
    assert len(trace.dynamo) == 1, "one graph, no recompile on the second call"
    assert len(trace.aot) == 1
    assert torch.equal(trace.outputs, EXPECTED)


@pytest.mark.parametrize("target", list(JOIN))
def test_a_missing_wait_is_a_race(target: str) -> None:
    racy = SOURCES[target].replace(JOIN[target], "")
    with pytest.raises(
        StreamRaceError,
        match=r"tensor 'out' made on stream 'side' at <generated_\d+.py>:\d+ is read "
        r"on stream 'default' at <generated_\d+.py>:\d+ with no wait in between",
    ):
        run_checked(racy, target, lambda m: m.AtOnce(), X, eager_first=EAGER_FIRST.get(target, False))


@pytest.mark.parametrize("target", ["cuda", "npugraph_ex"])
def test_native_streams_and_events_lower_to_the_runtime_ops(target: str) -> None:
    trace = trace_graph(SOURCES[target], target, lambda m: m.AtOnce(), X, eager_first=True)
    assert _runtime_ops(trace.dynamo[0]) == [
        ("event_record", ("m.AtOnce.side.fork",)),
        ("stream_enter", ("side", 0)),
        ("event_wait", ("m.AtOnce.side.fork",)),
        ("record_stream", (trace.dynamo[0].graph.find_nodes(op="placeholder")[0], "side")),
        ("event_record", ("m.AtOnce.side.join",)),
        ("stream_exit", ("side",)),
        ("event_wait", ("m.AtOnce.side.join",)),
    ]


@pytest.mark.parametrize("target", ["cuda", "npugraph_ex"])
def test_streams_and_events_made_inside_the_compiled_region_fail(target: str) -> None:
    with pytest.raises(torch._dynamo.exc.Unsupported, match="Event\\(\\) inside a compiled region"):
        trace_graph(SOURCES[target], target, lambda m: m.AtOnce(), X)


@pytest.mark.parametrize("target", ["cuda", "npugraph_ex"])
def test_events_and_streams_are_made_once_for_all_instances(target: str) -> None:
    trace = trace_graph(SOURCES[target], target, lambda m: Pair(m.AtOnce), X, eager_first=True)
    assert trace.device.made == [("event", "m.AtOnce.side.fork"), ("stream", "side"), ("event", "m.AtOnce.side.join")]


def test_tagged_events_are_made_once_and_shared_by_instances() -> None:
    trace = trace_graph(SOURCES["aclgraph"], "aclgraph", lambda m: Pair(m.AtOnce), X)
    tags = [n.args[0] for n in trace.aot[0].graph.nodes if "tagged_event" in str(n.target)]
    fork, join = (f"{tags[0].split('.')[0]}.AtOnce.side.{role}" for role in ("fork", "join"))
    assert tags == [fork, fork, join, join] * 2


def test_a_tag_is_created_once_per_installation() -> None:
    with standins.torchair_installed() as torchair:
        torchair.ops.npu_create_tagged_event("t")
        with pytest.raises(ValueError, match="tagged event tag t is already in use"):
            torchair.ops.npu_create_tagged_event("t")
        first = load(SOURCES["aclgraph"], "aclgraph", "standin_tags_first")
        del sys.modules["standin_tags_first"]
        second = load(SOURCES["aclgraph"], "aclgraph", "standin_tags_second")  # another file, the same tags
        del sys.modules["standin_tags_second"]
        assert first._SIDE_FORK == "standin_tags_first.AtOnce.side.fork"
        assert second._SIDE_FORK == "standin_tags_second.AtOnce.side.fork"  # tagged after each module's name
    with standins.torchair_installed() as torchair:
        torchair.ops.npu_create_tagged_event("t")  # a new installation is a new process


GE_WAIT = """\
import torch
import torchair


class Cache(torch.nn.Module):
    def forward(self, x, cache):
        y = x + 1
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.scope.npu_wait_tensor(cache, y)
            cache.add_(y)
            z = cache * y
        return z
"""


def _cache_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.arange(3.0), torch.zeros(3)


def test_ge_orders_data_edges_itself_and_explicit_mode_asks_for_waits() -> None:
    assert torch.equal(run_checked(SOURCES["ge"], "ge", lambda m: m.AtOnce(), X), EXPECTED)
    with pytest.raises(StreamRaceError, match=r"tensor 'x\.cos\(\)' made on stream 'side'"):
        run_checked(SOURCES["ge"], "ge", lambda m: m.AtOnce(), X, data_edges="explicit")
    unwaited = GE_WAIT.replace("            torchair.scope.npu_wait_tensor(cache, y)\n", "")
    with pytest.raises(StreamRaceError, match="tensor 'y' made on stream 'default'"):
        run_checked(unwaited, "ge", lambda m: m.Cache(), _cache_inputs(), data_edges="explicit")


def test_ge_wait_tensor_with_its_result_discarded_orders_and_keeps_the_write() -> None:
    x, cache = _cache_inputs()
    trace = trace_graph(GE_WAIT, "ge", lambda m: m.Cache(), (x, cache), data_edges="explicit")
    assert torch.equal(cache, x + 1), "the in-place write reached the caller's buffer"
    assert torch.equal(trace.outputs, (x + 1) * (x + 1))
    (wait,) = trace.aot[0].graph.find_nodes(op="call_function", target=torch.ops.standin_air.wait_tensor.default)
    assert [u.target for u in wait.users] == [torch.ops.aten.add.Tensor], "later uses of cache read the wait"


def test_ge_wait_tensor_rebound_loses_the_write_as_on_the_device() -> None:
    x, cache = _cache_inputs()
    rebound = GE_WAIT.replace(
        "            torchair.scope.npu_wait_tensor(cache, y)",
        "            cache = torchair.scope.npu_wait_tensor(cache, y)",
    )
    trace = trace_graph(rebound, "ge", lambda m: m.Cache(), (x, cache))
    assert torch.equal(trace.outputs, (x + 1) * (x + 1))
    assert torch.equal(cache, torch.zeros(3)), "functionalization drops the write into the caller's buffer"


RECORD_WAIT = """\
import torch
import torchair


class Overlap(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        token = torchair.ops.record()
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.ops.wait([token])
            torchair.ops.npu_record_tagged_stream(y, "side")
            z = y * 2
        w = x - 1
        torchair.ops.wait([z])
        return z + w
"""


def test_mode_agnostic_record_and_wait_order_streams() -> None:
    assert torch.equal(run_checked(RECORD_WAIT, "aclgraph", lambda m: m.Overlap(), X), (X[0] + 1) * 2 + X[0] - 1)
    for line in ("            torchair.ops.wait([token])\n", "        torchair.ops.wait([z])\n"):
        with pytest.raises(StreamRaceError, match="with no wait in between"):
            run_checked(RECORD_WAIT.replace(line, ""), "aclgraph", lambda m: m.Overlap(), X)


def test_each_mode_rejects_the_other_modes_primitive() -> None:
    with pytest.raises(Exception, match="npu_wait_tensor is GE only"):
        run_checked(GE_WAIT, "aclgraph", lambda m: m.Cache(), _cache_inputs())
    with pytest.raises(Exception, match="tagged events have no GE converter"):
        run_checked(SOURCES["aclgraph"], "ge", lambda m: m.AtOnce(), X)


def test_scopes_nest_and_super_kernel_orders_nothing() -> None:
    source = textwrap.dedent("""\
        import torch
        import torchair


        class Limited(torch.nn.Module):
            def forward(self, x):
                with torchair.scope.super_kernel("moe"), torchair.scope.limit_core_num(8, 16):
                    with torchair.scope.npu_stream_switch("side", 0):
                        return x.cos()
        """)
    trace = trace_graph(source, "ge", lambda m: m.Limited(), X)
    lowered = standins.lower(standins.copy_graph(trace.dynamo[0]), "ge")
    assert [name for name, _ in _runtime_ops(lowered)] == [
        "core_limit_enter",
        "stream_enter",
        "stream_exit",
        "core_limit_exit",
    ]
