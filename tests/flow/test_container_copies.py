"""A new container of the same items holds their memory: ``ys = xs + []``, ``list(xs)``, ``ys += xs``, ``xs.copy()``.

``xs = [a, b]``, ``r = self.side(xs)``, then ``ys = list(xs)`` and ``ys[0].add_(1)`` writes ``a`` while the side
stream may still read it. On main a binding held what its value names as a view, a display or a call's result that
may be an argument, but a new list made of another's items (concatenated, copied by ``list``/``tuple``/``sorted``
or ``.copy()``, extended by ``+=``) held nothing: the write ran before the side call's join (race checker: ``a``
read on ``side``, written in place on ``default``, no wait between). Now such a value holds what its operands hold
(``result_aliases.py``: a concatenation where an operand is a container, a copy of one; ``binding_aliases.py``: a
container extended in place). Tensor arithmetic (``y = a + b``) still makes memory of its own. Every case runs
race-checked on every target and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import re

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import checked_outputs

from codegen.driver.api import transform_source

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, xs):
        return xs[0] * 2 + xs[1]

    def concatenated(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        ys = xs + []
        ys[0].add_(1)
        return r + z + a

    def concatenated_names(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        none = []
        ys = none + xs
        ys[0].add_(1)
        return r + z + a

    def listed(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        ys = list(xs)
        ys[0].add_(1)
        return r + z + a

    def sorted_tuple(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        ys = tuple(sorted(xs, key=lambda t: 0))
        ys[0].add_(1)
        return r + z + a

    def copied(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        ys = xs.copy()
        ys[0].add_(1)
        return r + z + a

    def extended(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        ys = []
        ys += xs
        ys[0].add_(1)
        return r + z + a

    def item_written(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        xs[0].add_(1)
        return r + z + a
""" + caller_source()

METHODS = ["concatenated", "concatenated_names", "listed", "sorted_tuple", "copied", "extended", "item_written"]
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")


@pytest.mark.parametrize("method", METHODS)
def test_the_write_waits_for_the_side_call(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    join = re.search(r'runtime\.wait\("m\.Model\.side\.join"\)', body).start()  # type: ignore[union-attr]
    assert body.index("z = ") < join < body.index("s[0].add_(1)")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(method: str, target: str) -> None:
    x = torch.randn(4, 3)
    got = checked_outputs(SOURCE, target, method, x)
    a, b = x + 1, x + 2
    torch.testing.assert_close(got, a * 2 + b + 3 + (a + 1), rtol=0, atol=0)
