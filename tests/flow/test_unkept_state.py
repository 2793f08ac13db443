"""A call reading state the caller changes through a local holding its module's state: kept by name, or at once.

``ds = self.dispatchers; ds[i].prepare(x)`` leaves a tensor the caller's stream made only on the dispatcher
(vllm_qwen3_dbo's ``token_dispatchers[i].preprocess_and_permtute1(...)``). A call given ``ds[i]``, or whose body
reads ``self.dispatchers``, reads it on its side stream. Run apart, the side read races with the caller's next
allocation unless the tensor is kept. Walking the dispatcher keeps it, but its attributes appear on the first
call: ``torch.compile`` then guards on how many it has and compiles the second call again. So the tensors are
named from the dispatcher's class (``state_keeps.py``: ``record_stream(ds[i].t)``, also for the body's
``self.dispatchers[i].t``, spelled through the caller's ``ds``) and the call runs apart, one graph for two calls;
where they cannot be named the call runs on its caller's stream (``unkept_state.py``,
``test_named_state_keeps.py``). Both shapes, race-checked over two calls on two targets; with the names switched
off the walked object compiles twice.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source

from codegen.driver.api import transform_source
from codegen.lower.flow import callsites, unkept_state
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

    def send(self):
        return self.t + 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dispatchers = [Dispatcher(), Dispatcher()]

    @on_stream("side")
    def dispatch(self, d: Dispatcher):
        return d.send()

    @on_stream("side")
    def combine(self, y, i: int):
        return y * self.dispatchers[i].t

    def given(self, x):
        ds = self.dispatchers
        outs = [None, None]
        for i in range(2):
            ds[i].prepare(x + i)
            outs[i] = self.dispatch(ds[i])
        return outs[0] + outs[1]

    def state_read(self, x):
        ds = self.dispatchers
        outs = [None, None]
        for i in range(2):
            ds[i].prepare(x + i)
            outs[i] = self.combine(x * 3, i)
        return outs[0] + outs[1]

    def fresh(self, x):
        d = Dispatcher()
        d.prepare(x)
        y = self.dispatch(d)
        z = x * 3
        return y + z
""" + caller_source()


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    if method == "given":
        return x * 2 + 1 + (x + 1) * 2 + 1
    if method == "state_read":
        return x * 3 * (x * 2) + x * 3 * ((x + 1) * 2)
    return x * 2 + 1 + x * 3


def _trace(method: str, target: str):
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    trace = trace_graph(code, target, lambda m: m.Caller(method), (x,), calls=2)
    torch.testing.assert_close(trace.outputs, _want(method, x))
    return trace


_NAMED = {"given": r"record_\w*stream\(ds\[i\]\.t, ", "state_read": r"record_\w*stream\(ds\[i\]\.t, "}  # through ``ds``


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", ["given", "state_read"])
def test_runs_apart_keeping_the_named_tensors(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    assert re.search(_NAMED[method], code)
    assert not re.search(r"record_\w*stream\(d(s\[i\])?, ", code)  # no walk of a dispatcher
    assert len(_trace(method, target).dynamo) == 1


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
def test_an_object_the_function_makes_still_runs_apart(target: str) -> None:
    """``d = Dispatcher()`` is no state of the module: its tensor is named too, made anew in each graph."""
    code = transform_source(SOURCE, path="m.py", target=target)
    assert re.search(r"record_\w*stream\(d\.t,", code)
    assert len(_trace("fresh", target).dynamo) == 1


def test_without_the_names_the_walked_object_recompiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unkept_state, "state_keeps", lambda *_: None)
    monkeypatch.setattr(callsites, "reads_changed_state", lambda *_: False)
    monkeypatch.setattr(callsites, "gives_changed", lambda *_: False)  # else at once (test_given_changed_unnamed.py)
    assert len(_trace("given", "portable").dynamo) == 2
