"""An object's tensor read on a side stream is kept only where it may die while read (``state_keeps.py``).

The caller fills an object (``meta.load(x)``: ``meta.t`` made on its stream) and gives it to a side call whose
parameter is annotated with its class. Its tensor needs a ``record_stream`` only where its last reference may go
while the side stream reads it: the side body lets go of the attribute (``take``: ``self.t = None``; ``Effect.drops``
in ``class_state.py``), or the object dies with the caller (one it builds: ``meta = Box()``). An object the caller
was given (a parameter it never binds again) or reaches through its own state (``self.a.b``) outlives the call,
and its attribute holds the tensor past the caller's join: ``s = meta.t.sum()`` kept ``meta.t`` for nothing. The
caller's own later change of the object waits for the call (the object is an input of it).

A chain of the caller's own state given whole (``self.side_take(x, self.a.b)`` after ``self.a.b.load(x)``) was
never kept: the side body's ``take`` dropped a tensor the caller's stream made, and the caller's next allocation
raced with its read. It is kept now by name (``self.a.b.t``). Race-checked under the caller premise (the caller
passes a tensor it made right before and its module's object, and allocates after), each keep dropped alone races.
"""

from __future__ import annotations

import re

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Box:
    def __init__(self):
        self.k = 2

    def load(self, x):
        self.t = x * self.k

    def take(self):
        t = self.t
        self.t = None
        return t + 3


class Holder:
    def __init__(self):
        self.b = Box()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Holder()

    @on_stream("side")
    def side_sum(self, x, meta: Box):
        s = meta.t.sum()
        return x * s

    @on_stream("side")
    def side_take(self, x, meta: Box):
        return x * meta.take()

    def summed(self, x, meta):
        meta.load(x)
        y = self.side_sum(x, meta)
        z = x * 3
        return y + z

    def taken(self, x, meta):
        meta.load(x)
        y = self.side_take(x, meta)
        z = x * 3
        return y + z

    def built(self, x, meta):
        meta = Box()
        meta.load(x)
        y = self.side_sum(x, meta)
        z = x * 3
        return y + z

    def own_summed(self, x, meta):
        self.a.b.load(x)
        y = self.side_sum(x, self.a.b)
        z = x * 3
        return y + z

    def own_taken(self, x, meta):
        self.a.b.load(x)
        y = self.side_take(x, self.a.b)
        z = x * 3
        return y + z


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method, self.box = Model(), method, Box()

    def forward(self, x):
        out = getattr(self.model, self.method)(x * 1, self.box)
        return out, torch.zeros(1)
"""

_TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]
_KEPT = {"summed": None, "taken": "meta.t", "built": "meta.t", "own_summed": None, "own_taken": "self.a.b.t"}


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.index("\n    def ", start + 1) if "\n    def " in code[start + 1 :] else None]


def _run(code: str, target: str, method: str) -> None:
    x = torch.randn(2, 3)
    namespace: dict[str, object] = {}
    exec(compile(SOURCE, "eager_m.py", "exec"), namespace)  # the decorators run eagerly, same meaning
    want = namespace["Caller"](method)(x)[0]  # type: ignore[operator]
    native = target in ("cuda", "npugraph_ex")
    trace = trace_graph(code, target, lambda m: m.Caller(method), (x,), eager_first=native, calls=2)
    torch.testing.assert_close(trace.outputs[0], want)


@pytest.mark.parametrize("target", ["portable", "npugraph_ex"])
@pytest.mark.parametrize("method", list(_KEPT))
def test_kept_only_where_the_tensor_may_die_while_read(method: str, target: str) -> None:
    body = _method(transform_source(SOURCE, path="m.py", target=target), method)
    assert "side" in body and re.search(r"stream\(.*side", body), body  # the call runs apart
    kept = re.findall(r"record_stream\(((?:meta|self)[\w.]*),", body)
    assert kept == ([_KEPT[method]] if _KEPT[method] else []), body


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", list(_KEPT))
def test_race_free_and_exact(method: str, target: str) -> None:
    _run(transform_source(SOURCE, path="m.py", target=target), target, method)


@pytest.mark.parametrize("target", ["portable", "npugraph_ex"])
@pytest.mark.parametrize("method", ["taken", "built", "own_taken"])
def test_each_keep_is_needed(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    keep = re.compile(rf"record_stream\({re.escape(str(_KEPT[method]))},")
    body = _method(code, method)
    dropped = code.replace(body, "\n".join(line for line in body.split("\n") if not keep.search(line)))
    assert dropped != code
    with pytest.raises(StreamRaceError):
        _run(dropped, target, method)
