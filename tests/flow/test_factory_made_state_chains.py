"""Module state reached through a submodule that a factory function or a base class's ``__init__`` makes.

``combine`` reads ``self.experts.token_dispatchers[i].t`` (vllm_qwen3_dbo's shape) where ``self.experts =
make_experts()`` (``def make_experts() -> Experts: return Experts()``), or ``self.based`` that a base's ``__init__``
assigns. The caller fills ``ds[i]`` (``ds = self.experts.token_dispatchers``) before each call: the call runs apart
when the tensor it reads is named from the list's class and kept (``object_chains.chain_class``, for
``state_keeps.py``), and the caller's later ``self.experts.grouped(x)`` does not wait for it where ``grouped`` reaches
none of the lists (``state_reach.reached_apart``). Both read the holder's class among the class's own ``__init__``
assignments by the name called, so on main ``experts`` held ``make_experts`` and ``based`` nothing: the calls ran
on the caller's stream (no overlap). Both read ``class_chain.submodule_classes`` now, as ``self.direct = Experts()``
was read on main. Race-checked over two calls on two targets, one graph for both.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Dispatcher:
    def __init__(self):
        self.k = 2

    def prepare(self, x):
        self.t = x * self.k


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_dispatchers = [Dispatcher(), Dispatcher()]

    def grouped(self, x):
        return x * 5


def make_experts() -> Experts:
    return Experts()


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.based = Experts()


class Model(Base):
    def __init__(self):
        super().__init__()
        self.experts = make_experts()
        self.direct = Experts()

    @on_stream("side")
    def combine(self, y, i: int):
        return y * self.HOLDER.token_dispatchers[i].t

    def forward(self, x):
        ds = self.HOLDER.token_dispatchers
        outs = [None, None]
        for i in range(2):
            ds[i].prepare(x + i)
            outs[i] = self.combine(x * 3, i)
        g = self.HOLDER.grouped(x)
        return outs[0] + outs[1] + g
"""

HOLDERS = ["experts", "based", "direct"]
_JOIN = 'runtime.wait("m.Model.combine.join")'


def _code(holder: str, target: str = "portable") -> str:
    return transform_source(SOURCE.replace("HOLDER", holder), path="m.py", target=target)


@pytest.mark.parametrize("holder", HOLDERS)
def test_the_call_runs_apart_keeping_the_named_tensor(holder: str) -> None:
    """On main: ``experts`` and ``based`` ran ``self.combine`` on the caller's stream."""
    body = method_source(_code(holder), "forward")
    assert body.index('runtime.stream("side"') < body.index("runtime.record_stream(ds[i].t, ") < body.index("outs[i]")


@pytest.mark.parametrize("holder", HOLDERS)
def test_a_method_reaching_no_list_does_not_wait(holder: str) -> None:
    body = method_source(_code(holder), "forward")
    assert body.index(f"g = self.{holder}.grouped(x)") < body.rindex(_JOIN)


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("holder", HOLDERS)
def test_race_free_and_exact(holder: str, target: str) -> None:
    x = torch.randn(2, 3)
    trace = trace_graph(_code(holder, target), target, lambda m: m.Model(), (x,), calls=2)
    torch.testing.assert_close(trace.outputs, x * 3 * (x * 2) + x * 3 * ((x + 1) * 2) + x * 5)
    assert len(trace.dynamo) == 1
