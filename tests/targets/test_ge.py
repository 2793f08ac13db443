"""The ge target: stream switches and core limits, user events as ``torchair.ops.record``/``wait`` tokens, and
the automatic fork as one ``npu_wait_tensor`` control edge per call (its result discarded); no join, no records."""

from __future__ import annotations

import torch

from common_sources import AUTO, MANUAL
from npudsl.testing.targets import trace_graph
from targets_util import diagnostics, transform, user_code

MANUAL_OUT = """class Block(torch.nn.Module):
    def produce(self, x):
        with torchair.scope.limit_core_num(8, 16) if self.limit else nullcontext():
            out = x * 2
            _EVENT_TOKENS["m.Block.ready/consume"] = torchair.ops.record()
            _EVENT_TOKENS["m.Block.ready/back"] = _EVENT_TOKENS["m.Block.ready/consume"]
            return out

    def consume(self, x, scale: float = 2.0):
        if "m.Block.ready/consume" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("m.Block.ready/consume")])
        out = x * scale
        out = _clone(out)
        return out

    def back(self, x):
        if "m.Block.ready/back" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS.pop("m.Block.ready/back")])
        return x + 1

    def forward(self, x):
        with torchair.scope.npu_stream_switch("side", 1) if self.multistream else nullcontext():
            y = self.produce(x)
        with torchair.scope.npu_stream_switch("late", 0):
            z = self.consume(y)
        return self.back(z)
"""

TOKENS = """_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> what its last record orders on, until waited for
"""

FORK = """
import torch
from npudsl import on_stream


class Moe(torch.nn.Module):
    @on_stream("shared", when="self.multistream")
    def shared_expert(self, hidden_states: torch.Tensor, cache):
        cache.add_(1)
        return hidden_states * 2

    def forward(self, x: torch.Tensor, cache):
        hidden_states = x * 2
        topk_weights = hidden_states.softmax(-1)
        shared = self.shared_expert(hidden_states, cache)
        routed = hidden_states * topk_weights
        return routed + shared
"""

FORK_OUT = """class Moe(torch.nn.Module):
    def shared_expert(self, hidden_states: torch.Tensor, cache):
        cache.add_(1)
        return hidden_states * 2

    def forward(self, x: torch.Tensor, cache):
        hidden_states = x * 2
        topk_weights = hidden_states.softmax(-1)
        with torchair.scope.npu_stream_switch("shared", 0) if self.multistream else nullcontext():
            if self.multistream:
                torchair.scope.npu_wait_tensor(hidden_states, topk_weights)
            shared = self.shared_expert(hidden_states, cache)
        routed = hidden_states * topk_weights
        return routed + shared
"""


def test_switch_core_limit_user_events_and_clone() -> None:
    code = transform(MANUAL, "ge")
    assert user_code(code) == MANUAL_OUT
    assert TOKENS in code


def test_automatic_fork_join_and_keep_output_need_no_call_when_data_orders() -> None:
    code = transform(AUTO, "ge")
    assert "npu_wait_tensor" not in code and "join" not in code  # the first statement: nothing to order after
    assert 'with torchair.scope.npu_stream_switch("shared", 0):\n            s = self.shared(x)\n' in code
    assert "torchair.ops.record()" not in code


def test_fork_is_one_control_edge_with_its_result_discarded() -> None:
    code = transform(FORK, "ge")
    assert code.endswith(FORK_OUT)
    assert code.count("npu_wait_tensor") == 1
    assert "= torchair.scope.npu_wait_tensor" not in code  # rebinding would move the in-place write to the copy


def test_what_ge_used_to_reject_transforms_everywhere() -> None:
    for target in ("aclgraph", "ge", "npugraph_ex", "cuda", "portable"):
        assert not [d for d in diagnostics(MANUAL, target) if d.endswith("error")]


EDGES = """
import torch
from npudsl import on_stream
from .other import route


def quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.round(), x.abs()


class Moe(torch.nn.Module):
    @on_stream("shared")
    def shared(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    def gate(self, x: torch.Tensor) -> torch.Tensor:
        return x.softmax(-1)

    def flag(self, x: torch.Tensor, is_prefill: bool):
        on = not is_prefill
        s = self.shared(x)
        return s

    def unpacked(self, x: torch.Tensor):
        x = x * 1  # made here: the call reads what the function made, so its fork waits
        q, scale = quant(x)
        s = self.shared(x)
        return s + q

    def own_method(self, x: torch.Tensor):
        x = x * 1
        weights = self.gate(x)
        meta = route(x)
        s = self.shared(x)
        return s + weights

    def rebound(self, x: torch.Tensor, c: bool):
        h = x + 1
        if c:
            h = None
        s = self.shared(x)
        return s

    def topk(self, x: torch.Tensor):
        top = x.topk(2)
        s = self.shared(x)
        return s

    def unannotated(self, x):
        y = x + 1
        s = self.shared(x)
        return s
"""


def _edges(code: str) -> dict[str, str]:
    """Each method with the control edge put before its call, if any."""
    found, method = {}, None
    for line in code.splitlines():
        if line.strip().startswith("def "):
            method = line.strip()[4:].split("(")[0]
        elif "npu_wait_tensor(" in line:
            found[method] = line.strip()
    return found


def test_fork_edges_join_only_certain_tensors() -> None:
    """The edge takes two tensors: a flag, a tuple from an unseen call, a name that may be None, a
    ``topk`` result, or an unannotated input would fail GE's capture, so those calls get none. (A call that
    reads only its function's parameters needs none at all, ``test_ge_forks.py``: the two with an edge read
    what their function made.)"""
    assert _edges(transform(EDGES, "ge")) == {
        "unpacked": "torchair.scope.npu_wait_tensor(x, scale)",
        "own_method": "torchair.scope.npu_wait_tensor(x, weights)",
    }


EVENTS = '''
import torch
from npudsl import after, on_stream, records


class Layer(torch.nn.Module):
    @records("written")
    def write(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @on_stream("side", sync="manual")
    @after("written")
    def read_side(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1

    @after("written")
    def read_main(self, x: torch.Tensor) -> torch.Tensor:
        return x - 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.read_side(x) + self.read_main(x)


class Model(torch.nn.Module):
    """One layer records, another layer of the same class waits: events are the class's."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.second = Layer(), Layer()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.first.write(x)
        return self.second(y) + self.first(y)
'''


def _air_ops(gm: torch.fx.GraphModule) -> list[str]:
    return [
        str(n.target).split(".")[1]
        for n in gm.graph.nodes
        if n.op == "call_function" and str(n.target).startswith("standin_air.")
    ]


def test_event_tokens_live_for_one_run_of_the_graph() -> None:
    """A token per waiting function, taken by its wait: one graph for three calls, nothing stashed returned,
    every wait ordered on a record of the same run, and the other layer's wait finds its token too."""
    code = transform(EVENTS, "ge")
    # ``write`` ends by making the tensor it returns: that tensor orders the waits (no record op)
    assert '_EVENT_TOKENS["m.Layer.written/read_side"] = out' in code
    assert '_EVENT_TOKENS["m.Layer.written/read_main"] = _EVENT_TOKENS["m.Layer.written/read_side"]' in code
    assert 'torchair.ops.wait([_EVENT_TOKENS.pop("m.Layer.written/read_main")])' in code
    x = torch.arange(4.0)
    trace = trace_graph(code, "ge", lambda m: m.Model(), (x,), calls=3)
    assert len(trace.dynamo) == 1, "the second call recompiled"
    (output,) = trace.dynamo[0].graph.find_nodes(op="output")
    assert len(output.args[0]) == 1, "a token became a graph output"
    # the second layer's two waits take the first layer's tokens; the first layer's forward finds none left
    assert [op for op in _air_ops(trace.dynamo[0]) if op in ("record", "wait")] == ["wait", "wait"]
    assert torch.equal(trace.outputs, (x * 2 + 1) + (x * 2 - 1) + (x * 2 + 1) + (x * 2 - 1))


RETURNED = """
import torch
from npudsl import after, on_stream, records


class M(torch.nn.Module):
    @records("a")
    def made_last(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mm(x, x)

    @records("b")
    def made_earlier(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        x.add_(1)
        return y

    @records("c")
    def passed_through(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @on_stream("side", sync="manual")
    @after("a", "b", "c")
    def reader(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1
"""


def test_a_record_orders_on_the_returned_tensor_only_when_the_body_made_it_last() -> None:
    code = transform(RETURNED, "ge")
    assert '_EVENT_TOKENS["m.M.a"] = out' in code
    assert '_EVENT_TOKENS["m.M.b"] = x' in code  # an in-place write of ``x`` comes after ``y``: ``x`` is the token
    assert '_EVENT_TOKENS["m.M.c"] = torchair.ops.record()' in code  # the caller made ``x``


FORKS = """
import torch
from npudsl import on_stream


def pair(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x, x


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.on = True

    @on_stream("side", when="self.on")
    def a(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1

    @on_stream("side", when="self.on")
    def b(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @on_stream("other", when="self.on")
    def c(self, x: torch.Tensor) -> torch.Tensor:
        return x - 1

    def first(self, x: torch.Tensor, flags: tuple[bool, bool]) -> torch.Tensor:
        on, _ = flags
        y = self.a(x)
        z = self.b(y)
        w = self.c(y)
        return z + w

    def reads_last(self, x: torch.Tensor) -> torch.Tensor:
        u, v = pair(x * 3)
        y = self.c(u)
        return y + v

    def reads_unpacked(self, x: torch.Tensor) -> torch.Tensor:
        u, w = self.halves(x)
        y = self.c(u)
        return y + w

    def halves(self, x):
        return x.chunk(2)

    def above(self, x: torch.Tensor, n: int) -> torch.Tensor:
        x = x * 1
        w, i = x.topk(1)
        if n > 0:
            y = self.c(x)
            return y + w
        return w

    def reads_earlier(self, x: torch.Tensor) -> torch.Tensor:
        u = x * 3
        v = x.sum()
        y = self.c(u)
        return y + v
"""


def test_a_fork_edge_only_where_data_does_not_already_order_the_call() -> None:
    """No edge before any op of the function, for a call that reads what the caller's last op made (tuple
    unpacking, no certain tensor), for the next call on the same stream, or for one that reads a result of the
    call before it; an edge where the caller ran an op the call does not read."""
    code = transform(FORKS, "ge")
    first = code[code.index("def first") : code.index("def reads_last")]
    assert "torchair.ops" not in first and "npu_wait_tensor" not in first
    reads_last = code[code.index("def reads_last") : code.index("def reads_earlier")]
    assert "torchair.scope.npu_wait_tensor(u, v)" in reads_last
    # ``u`` is no certain tensor where it is made, but ``c`` takes a tensor: wait for its producer, one call
    reads_unpacked = code[code.index("def reads_unpacked") : code.index("def halves")]
    assert "torchair.ops.wait([u])" in reads_unpacked and "record()" not in reads_unpacked
    # the tensors ``topk`` unpacks to are certain, and the block above the ``if`` is searched for one
    above = code[code.index("def above") : code.index("def reads_earlier")]
    assert "torchair.scope.npu_wait_tensor(x, i)" in above
    reads_earlier = code[code.index("def reads_earlier") :]
    assert "torchair.ops.wait([v])" in reads_earlier or "npu_wait_tensor(u, v)" in reads_earlier
