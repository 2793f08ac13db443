"""An object the caller changes is found through the locals that hold it and through attribute chains, as state is.

``changed_objects.py`` decides which objects given to a parameter annotated with a user class are kept alive for the
side stream: those whose state the caller changes (a tensor it made may be left only on the object, read by the side
body and dropped). It named them by the root of the changed chain, so a change through an alias (``o = box;
o.fill(x)``, then ``self.side(box)``), through a local holding an attribute of another object (``b = h.box;
b.fill(x)``), or a chain given whole (``self.side(h.box)`` after ``h.box.fill(x)``) went unkept: the race checker saw
the caller's stream allocate over the tensor the side stream still read. Objects are now paths (``h.box``, an item
standing for its container), rerooted through the locals that hold them (``view_roots.spread``); a chain given whole
is bound to a name before the call and kept (``site_sync._object_item``). An object the caller builds itself (``h =
Holder()``, then ``self.side_meta(x, h.meta)``) holds tensors made on its stream that die with it: kept too. A sibling
the caller does not change, of an object it was given (``h.meta`` beside a changed ``h.box``), is still not kept.
Race-free and exact on every target that keeps memory.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from bench.sync_count import count_graph
from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Box:
    def __init__(self, t=None):
        self.t = t

    def fill(self, x):
        self.t = x * 2

    def take(self):
        t = self.t
        self.t = None
        return t + 3


class Holder:
    def __init__(self):
        self.box = Box()
        self.meta = Box(torch.ones(2, 3))


class Model(nn.Module):
    @on_stream("side")
    def side(self, box: Box):
        return box.take()

    @on_stream("side")
    def side_meta(self, x, meta: Box):
        return x * meta.t + x + 3

    def aliased(self, x):
        box = Box()
        o = box
        o.fill(x)
        y = self.side(box)
        z = x * 3
        return y + z

    def chain(self, x):
        h = Holder()
        h.box.fill(x)
        y = self.side(h.box)
        z = x * 3
        return y + z

    def chain_alias(self, x):
        h = Holder()
        b = h.box
        b.fill(x)
        y = self.side(h.box)
        z = x * 3
        return y + z

    def holder_first(self, x):
        h = Holder()
        b = h.box
        h.box.fill(x)
        y = self.side(b)
        z = x * 3
        return y + z

    def item_alias(self, x):
        boxes = [Box()]
        o = boxes[0]
        o.fill(x)
        y = self.side(boxes[0])
        z = x * 3
        return y + z

    def built(self, x):
        h = Holder()
        y = self.side_meta(x, h.meta)
        z = x * 3
        return y + z

    def sibling(self, x, h: Holder):
        h.box.fill(x)
        y = self.side_meta(x, h.meta)
        z = x * 3
        return y + z + h.box.t - x * 2


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method, self.holder = Model(), method, Holder()

    def forward(self, x):
        if self.method == "sibling":
            return self.model.sibling(x * 1, self.holder)
        return getattr(self.model, self.method)(x * 1)
"""

RACED = ["aliased", "chain", "chain_alias", "holder_first", "item_alias"]  # given one object, kept
BUILT = "built"  # given x and an object it built: both kept
_TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]


def _run(target: str, method: str) -> tuple[torch.Tensor, int]:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    native = target in ("cuda", "npugraph_ex")
    trace = trace_graph(code, target, lambda m: m.Caller(method), (x,), eager_first=native)
    torch.testing.assert_close(trace.outputs, x * 2 + 3 + x * 3)
    return trace.outputs, count_graph(trace.dynamo[0])["record_stream"]


@pytest.mark.parametrize("method", RACED)
def test_the_changed_object_is_kept(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    kept = [line.strip() for line in body.splitlines() if "record_stream(" in line]
    assert len(kept) == 1, body


def test_a_chain_given_whole_is_bound_and_kept() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "chain")
    lines = [line.strip() for line in body.splitlines()]
    bound = next(line for line in lines if line.endswith(" = h.box"))
    name = bound.split(" = ")[0]
    assert f'runtime.record_stream({name}, "side")' in lines
    assert f"y = self.side({name})" in lines


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("method", RACED)
def test_race_free_and_exact(method: str, target: str) -> None:
    _, kept = _run(target, method)
    assert kept == 1, "the object's one tensor"


@pytest.mark.parametrize("target", _TARGETS)
def test_an_object_built_here_is_kept(target: str) -> None:
    """``h = Holder()`` in the caller: ``h.meta``'s tensor was made on the caller's stream and dies with ``h``."""
    _, kept = _run(target, BUILT)
    assert kept == 2, "x and the object's one tensor"


def test_a_sibling_the_caller_does_not_change_is_not_kept() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "sibling")
    assert "record_stream(h.meta" not in body and "= h.meta" not in body
    _, kept = _run("portable", "sibling")
    assert kept == 0, "x is read again after the join; h.meta is not kept"
