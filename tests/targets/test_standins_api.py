"""The stand-ins themselves: what dynamo traces through them, core limits, backends, configs, restoring."""

from __future__ import annotations

import sys

import pytest
import torch

from npudsl.testing import standins
from npudsl.testing.targets import trace_graph

X = (torch.arange(4.0),)

LIMITED = """\
import torch
from torch import nn
import contextlib
from collections.abc import Iterator

_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


@contextlib.contextmanager
def _core_limit(aicore: int, vector: int) -> Iterator[None]:
    stream = torch.npu.current_stream()
    previous = torch.npu.get_stream_limit(stream)
    torch.npu.set_stream_limit(stream, aicore, vector)
    try:
        yield
    finally:
        torch.npu.set_stream_limit(stream, previous["cube_core_num"], previous["vector_core_num"])


class Split(nn.Module):
    def forward(self, x):
        with torch.npu.stream(_stream("side", 0)), _core_limit(8, 16):
            return torch.relu(x)
"""


def test_eager_stream_limits_break_a_fullgraph_trace_as_the_real_bindings_do() -> None:
    with pytest.raises(torch._dynamo.exc.Unsupported, match="get_stream_limit.*C bindings that dynamo does not trace"):
        trace_graph(LIMITED, "npugraph_ex", lambda m: m.Split(), X, eager_first=True)


def test_npugraph_ex_limit_core_num_is_a_scope_in_the_graph_and_eager_calls_eagerly() -> None:
    scoped = LIMITED.replace("_core_limit(8, 16)", "torch.npu.npugraph_ex.scope.limit_core_num(8, 16)")
    trace = trace_graph(scoped, "npugraph_ex", lambda m: m.Split(), X, eager_first=True)
    lowered = standins.lower(standins.copy_graph(trace.dynamo[0]), "npugraph_ex")
    calls = [(n.target.__name__, n.args) for n in lowered.graph.nodes if n.op == "call_function"]
    assert calls == [
        ("stream_enter", ("side", 0)),
        ("core_limit_enter.default", (8, 16)),
        ("relu", calls[2][1]),
        ("core_limit_exit.default", ()),
        ("stream_exit", ("side",)),
    ]
    assert trace.device.limits == {"side": {"cube_core_num": 24, "vector_core_num": 48}}, "the eager run restored it"


def test_dynamo_reads_tensor_record_stream_itself_so_sources_are_rewritten() -> None:
    with standins.device_installed("cuda"):
        side = torch.cuda.Stream()
        with pytest.raises(Exception, match="record_stream\\(\\) expects a Stream argument, got Stream"):
            torch.compile(lambda x: x.record_stream(side), backend="eager", fullgraph=True)(torch.ones(1))


def test_installing_and_removing_restores_torch_and_sys_modules() -> None:
    stream, had_npu, torchair = torch.cuda.Stream, hasattr(torch, "npu"), sys.modules.get("torchair")
    for target in standins.TARGETS:
        with standins.installed(target):
            assert ("torchair" in sys.modules) == (target in ("aclgraph", "ge"))
    assert torch.cuda.Stream is stream and hasattr(torch, "npu") == had_npu
    assert sys.modules.get("torchair") is torchair


def test_torchair_backend_checks_in_the_mode_of_its_config() -> None:
    with standins.torchair_installed() as torchair:
        config = torchair.CompilerConfig()
        config.mode = "reduce-overhead"
        wait = torch.compile(
            lambda x: torchair.scope.npu_wait_tensor(x, x) + 1,
            backend=torchair.get_npu_backend(compiler_config=config),
            fullgraph=True,
        )
        with pytest.raises(Exception, match="npu_wait_tensor is GE only"):
            wait(torch.ones(1))


def test_npugraph_ex_backend_takes_its_options_by_name() -> None:
    with standins.installed("npugraph_ex"):
        fn = torch.compile(lambda x: x * 2, backend="npugraph_ex", options={"clone_output": True}, fullgraph=True)
        assert torch.equal(fn(torch.ones(2)), torch.full((2,), 2.0))
        bad = torch.compile(lambda x: x * 3, backend="npugraph_ex", options={"clone_outputs": True})
        with pytest.raises(Exception, match="Invalid option 'clone_outputs'"):
            bad(torch.ones(2))


def test_config_options_behave_like_torchairs() -> None:
    config = standins.CompilerConfig()
    assert config.mode.value == "max-autotune" and config.debug.aclgraph.clone_input.value == "1"
    config.debug.aclgraph.enable_output_clone = True
    assert config.debug.aclgraph.enable_output_clone.value == "1"
    config.aclgraph_config.use_custom_pool = (0, 7)
    with pytest.raises(ValueError, match="not in optional list"):
        config.mode = "default"
    with pytest.raises(ValueError, match="has no option clone_inputs"):
        config.debug.aclgraph.clone_inputs = True


def test_torchair_wait_checks_its_argument_like_the_real_one() -> None:
    with standins.torchair_installed() as torchair:
        with pytest.raises(ValueError, match="requires at least one tensor"):
            torchair.ops.wait([])
        with pytest.raises(ValueError, match="must be torch.Tensor"):
            torchair.ops.wait([1])
        with pytest.raises(ValueError, match="is not in use"):
            torchair.ops.npu_tagged_event_record(standins.TaggedEvent("never created"))


JOINED_BY_STREAM = """\
import torch

SIDE = torch.cuda.Stream()
READY = torch.cuda.Event()


class Joined(torch.nn.Module):
    def forward(self, x):
        caller = torch.cuda.current_stream()
        READY.record(caller)
        with torch.cuda.stream(SIDE):
            READY.wait()
            y = x.cos()
        caller.wait_stream(SIDE)
        return y + 1
"""


def test_wait_stream_and_record_on_a_stream_lower_to_events() -> None:
    trace = trace_graph(JOINED_BY_STREAM, "cuda", lambda m: m.Joined(), X)
    assert torch.equal(trace.outputs, X[0].cos() + 1)
    ops = [(n.target.__name__, n.args) for n in trace.dynamo[0].graph.nodes if "npudsl" in str(n.target)]
    assert ops == [
        ("event_record", ("event1",)),
        ("stream_enter", ("stream1", 0)),
        ("event_wait", ("event1",)),
        ("stream_exit", ("stream1",)),
        ("stream_enter", ("stream1", 0)),
        ("event_record", ("stream1->default",)),
        ("stream_exit", ("stream1",)),
        ("event_wait", ("stream1->default",)),
    ]
