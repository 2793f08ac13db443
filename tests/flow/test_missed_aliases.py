"""A tensor a side call reads, written through a name the planner did not know shared its memory.

``xs = [a, b]``, ``r = self.side(xs)``, then ``for c in xs: c.add_(1)`` writes ``a`` and ``b`` while the side stream
may still read them; so do ``for c in (a, b)``, ``[c.add_(1) for c in xs]`` and ``out[0] = a`` before the call
with ``a.add_(1)`` after it. On main the names the planner groups (then ``input_aliases.py``) came only from plain
reference copies and views, so ``c`` held none of ``xs``'s memory and ``a`` none of ``out``'s: the write ran before
the join, and the race checker found the side stream's read and the caller's write with no wait between. Now a loop
or comprehension target holds what its iterable may hold, and a container what is stored into it or taken in
(``out[0] = a``, ``out.append(a)``: ``binding_aliases.py``), so the write waits. Likewise a tensor property that is
a view (``v = a.T``: ATen's ``numpy_T``; ``.mT``, ``.real``, ``.data``), a walrus (``if (v := a[0]) is not None:
v.add_(1)``), a choice (``v = a if c else b``) and an annotated assignment (``v: torch.Tensor = a[0]``) bind ``v``
to ``a``'s memory (``result_aliases.py``, ``value_views.py``), and a tensor stored into the object's state
(``self.held = a``, ``self.stash[0] = a``) is the object's memory: the caller's write through ``self.held`` waits
for a side call reading ``a``, and its write of ``a`` for a side call reading ``self.held`` (``site_views.py``). On
main each wrote ``a`` before the join. Every case runs race-checked on every target and equals the same arithmetic
on one stream.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stash = [None]
        self.held = None

    @on_stream("side")
    def side(self, xs):
        return xs[0] * 2 + xs[1]

    @on_stream("side")
    def single(self, h):
        return h * 2

    @on_stream("side")
    def reads_held(self):
        return self.held * 2

    def looped(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        for c in xs:
            c.add_(1)
        return r + z + a

    def looped_over_a_display(self, x):
        a = x + 1
        b = x + 2
        r = self.side([a, b])
        z = torch.ones(x.shape) * 3
        for c in (a, b):
            c.add_(1)
        return r + z + a

    def comprehended(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        [c.add_(1) for c in xs]
        return r + z + a

    def stored(self, x):
        a = x + 1
        b = x + 2
        out = [b, b]
        out[0] = a
        r = self.side(out)
        z = torch.ones(x.shape) * 3
        a.add_(1)
        return r + z + a

    def transposed(self, x):
        a = x + 1
        v = a.T
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        v.add_(1)
        return r + z + a

    def walrus(self, x):
        a = x + 1
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        if (v := a[0]) is not None:
            v.add_(1)
        return r + z + a

    def chosen(self, x):
        a = x + 1
        b = x + 2
        v = a if x.shape[0] > 1 else b
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        v.add_(1)
        return r + z + a

    def annotated(self, x):
        a = x + 1
        v: torch.Tensor = a[0]
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        v.add_(1)
        return r + z + a

    def stashed_item(self, x):
        a = x + 1
        self.stash[0] = a
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        self.stash[0].add_(1)
        return r + z + a

    def stashed(self, x):
        a = x + 1
        self.held = a
        r = self.single(a)
        z = torch.ones(x.shape) * 3
        self.held.add_(1)
        return r + z + a

    def read_from_state(self, x):
        a = x + 1
        self.held = a
        r = self.reads_held()
        z = torch.ones(x.shape) * 3
        a.add_(1)
        return r + z + a
""" + caller_source()

METHODS = ["looped", "looped_over_a_display", "comprehended", "stored", "transposed", "walrus", "chosen", "annotated"]
METHODS += ["stashed_item", "stashed", "read_from_state"]
WRITE = {
    **dict.fromkeys(METHODS[:3], "c.add_(1)"),
    "stored": "a.add_(1)",
    "walrus": "v :=",
    "read_from_state": "a.add_",
}
WRITE |= {"stashed_item": "self.stash[0].add_(1)", "stashed": "self.held.add_(1)"}
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    """The same arithmetic, on one stream: the side call reads ``a`` and ``b`` before the caller adds to them."""
    a, b = x + 1, x + 2
    if method in ("walrus", "annotated"):
        written = a.clone()
        written[0] += 1
        return a * 2 + 3 + written
    return (a * 2 + (0 if method in ("transposed", "chosen") or method in METHODS[8:] else b)) + 3 + (a + 1)


@pytest.mark.parametrize("method", METHODS)
def test_the_write_waits_for_the_side_call(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    join = re.search(r'runtime\.wait\("m\.Model\.\w+\.join"\)', body).start()  # type: ignore[union-attr]
    assert body.index("runtime.stream(") < body.index("z = ") < join < body.index(WRITE.get(method, "v.add_(1)"))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(4, 3)
    native = target in ("cuda", "npugraph_ex")
    got = trace_graph(code, target, lambda m: m.Caller(method), (x,), eager_first=native).outputs
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
