"""The runtime ops trace into one graph, in program order, and survive dead-code elimination."""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from helpers import capture_graph
from npudsl import runtime
from npudsl.race import npudsl_backend
from npudsl.race._timeline import runtime_op


class Portable(nn.Module):
    """The shape of generated portable code: fork, stream + core limit, join."""

    def __init__(self, multistream: bool = True) -> None:
        super().__init__()
        self.up = nn.Linear(4, 4)
        self.multistream = multistream

    def shared(self, x: torch.Tensor) -> torch.Tensor:
        runtime.record("t.Portable.shared.fork")
        with runtime.stream("shared", 0) if self.multistream else contextlib.nullcontext(), runtime.core_limit(8, 16):
            runtime.wait("t.Portable.shared.fork")
            out = self.up(x)
            runtime.record_stream(out, "default")
            runtime.record("t.Portable.shared.join")
            return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shared = self.shared(x)
        routed = x * 2
        if self.multistream:
            runtime.wait("t.Portable.shared.join")
        return routed + shared


def _trace(model: nn.Module) -> torch.fx.GraphModule:
    return capture_graph(model, torch.randn(2, 4))


def test_ops_trace_into_one_graph_in_program_order() -> None:
    ops = [(runtime_op(n), n.args) for n in _trace(Portable()).graph.nodes if runtime_op(n)]
    assert [name for name, _ in ops] == [
        "event_record",
        "stream_enter",
        "core_limit_enter",
        "event_wait",
        "record_stream",
        "event_record",
        "core_limit_exit",
        "stream_exit",
        "event_wait",
    ]
    assert ops[1][1] == ("shared", 0) and ops[2][1] == (8, 16)


def test_ops_survive_dead_code_elimination() -> None:
    gm = _trace(Portable())
    before = sum(1 for n in gm.graph.nodes if runtime_op(n))
    gm.graph.eliminate_dead_code()
    assert sum(1 for n in gm.graph.nodes if runtime_op(n)) == before == 9


def test_false_guard_leaves_no_stream_ops() -> None:
    names = [runtime_op(n) for n in _trace(Portable(multistream=False)).graph.nodes if runtime_op(n)]
    assert "stream_enter" not in names and "event_wait" in names


def test_compiled_equals_eager_on_cpu() -> None:
    model, x = Portable(), torch.randn(5, 4)
    assert torch.equal(torch.compile(model, backend=npudsl_backend, fullgraph=True)(x), model(x))


def test_current_stream_follows_nesting() -> None:
    seen = []
    with runtime.stream("a"):
        with runtime.stream("b"):
            seen.append(runtime.current_stream())
        seen.append(runtime.current_stream())
    seen.append(runtime.current_stream())
    assert seen == ["b", "a", "default"]


def test_stream_exit_runs_when_the_body_raises() -> None:
    with contextlib.suppress(ValueError), runtime.stream("a"):
        raise ValueError
    assert runtime.current_stream() == "default"
