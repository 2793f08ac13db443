"""An object given whole to a call is read whole: a pending call writing its state joins first.

``y = self.bump(x)`` writes ``self.acc`` in place on its stream; ``peek(self)`` then reads ``self.acc`` on the
caller's stream, through a function given the object. The statement names no attribute of ``self``, so no path it
read met the pending write and the join waited for ``y + z``: the race checker saw ``self.acc`` written on 'side'
and read on 'default' with nothing in between. A call given an object whole reads it as ``self.*``
(``state_access.state_reads``), which meets every path of the object (``paths_meet.py``); an alias of the object
(``me = self``) holds the pending call's paths under its own name (``aliasing.rerooted``). A statement reading
another attribute of the object (``self.scale``) still runs before the join: its reads are named by their paths.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from bench.sync_count import count_graph
from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


def peek(obj):
    return obj.acc * 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(4, 3))
        self.register_buffer("scale", torch.ones(4, 3))

    @on_stream("side")
    def bump(self, x):
        self.acc.copy_(x @ x.T @ x)
        return x * 2

    def passes_whole(self, x):
        y = self.bump(x)
        w = x * 3
        z = peek(self)
        return y + z + w

    def passes_alias(self, x):
        y = self.bump(x)
        me = self
        w = x * 3
        z = peek(me)
        return y + z + w

    def reads_other(self, x):
        y = self.bump(x)
        s = self.scale * 2
        return y + s
""" + caller_source()

_TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]


def _code(target: str = "portable") -> str:
    return transform_source(SOURCE, path="m.py", target=target)


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(4, 3)
    namespace: dict[str, object] = {}
    exec(compile(SOURCE, "eager_m.py", "exec"), namespace)  # the decorators run eagerly, same meaning
    want = getattr(namespace["Model"](), method)(x * 1)  # type: ignore[operator]
    trace = trace_graph(
        _code(target), target, lambda m: m.Caller(method), (x,), eager_first=target in ("cuda", "npugraph_ex")
    )
    torch.testing.assert_close(trace.outputs, want)
    return count_graph(trace.dynamo[0])


def test_joined_before_the_object_is_given_whole() -> None:
    body = method_source(_code(), "passes_whole")
    wait = body.index('runtime.wait("m.Model.bump.join")')
    assert body.index("w = x * 3") < wait < body.index("z = peek(self)")


def test_joined_before_an_alias_of_the_object_is_given_whole() -> None:
    body = method_source(_code(), "passes_alias")
    wait = body.index('runtime.wait("m.Model.bump.join")')
    assert body.index("w = x * 3") < wait < body.index("z = peek(me)")


def test_another_attribute_read_before_the_join() -> None:
    body = method_source(_code(), "reads_other")
    assert body.index("s = self.scale * 2") < body.index('runtime.wait("m.Model.bump.join")')


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", ["passes_whole", "passes_alias", "reads_other"])
def test_race_free_and_exact(method: str, target: str) -> None:
    assert _sync(method, target)["switch"] == 1
