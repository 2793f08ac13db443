"""A tensor stored in an object of the caller's object, dropped by a store of the object or of the tensor's chain.

``self.box = Box(x * 2)``, then ``y = self.side_box(x)`` (whose body reads ``self.box.stash``), then
``self.box.stash = z``: the tensor ``x * 2`` was made on the caller's stream and nothing holds it once the chain
points at ``z``; likewise ``self.box.stash = x * 2`` before the call and ``self.box = Box(z)`` after it, which drops
the object holding it. ``rebound_state.py`` kept a chain stored both before and after the call only where the two
were one chain or a wildcard covered the other (``*``, ``box.*``); a store of ``box`` and one of ``box.stash`` did
not meet, so nothing was kept and, run eagerly, the caller's next allocation (``torch.ones_like(x) * 3``) may take
the memory the side stream still reads. They meet now (``paths_meet.under``: ``box.stash`` lies under ``box``), and
the narrower chain is kept at the fork. (Compiled, dynamo returns the first tensor from the graph, to rebuild the
object it made, so the race checker finds its memory alive throughout: the generated code is what tells.)
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Box:
    def __init__(self, t=None):
        self.stash = t


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.box = Box()

    @on_stream("side")
    def side_box(self, x):
        return x * self.box.stash

    def chain_after(self, x):
        self.box = Box(x * 2)
        y = self.side_box(x)
        z = x * 5
        self.box.stash = z
        w = torch.ones_like(x) * 3
        return y + z + w

    def object_after(self, x):
        self.box.stash = x * 2
        y = self.side_box(x)
        z = x * 5
        self.box = Box(z)
        w = torch.ones_like(x) * 3
        return y + z + w
""" + caller_source()

_METHODS = ["chain_after", "object_after"]


@pytest.mark.parametrize("method", _METHODS)
def test_the_old_tensor_is_kept(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert 'runtime.record_stream(self.box.stash, "side")\n            y = self.side_box(x)' in body


@pytest.mark.parametrize("target", ["portable", "aclgraph", "npugraph_ex", "cuda"])
@pytest.mark.parametrize("method", _METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,), eager_first=target in ("cuda", "npugraph_ex"))
    torch.testing.assert_close(got, x * (x * 2) + x * 5 + 3, rtol=0, atol=0)
