"""A side call's result stored through a subscript or an attribute is read there.

``t[0] = q[0]`` and ``t[:] = q`` run a copy kernel on the caller's stream when ``t`` is a tensor;
``out[0] = q`` (a dict) and ``self.stash = q`` leave ``q`` where a later read names ``out`` or ``self.stash``.
The planner took all four for reference copies (like ``a = q``), joined nowhere before the later read, and
the race checker found each (fixed in ``aliasing.py``: only names are targets of a copy). ``a, *rest = q, x``
still copies references: no join there, the join stays before the first read of ``a``. Every case runs
race-checked on three targets and equals the same arithmetic on one stream.
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


class Model(nn.Module):
    @on_stream("quant")
    def quantize(self, x):
        return x * 2

    def dict_store(self, x):
        out = {}
        q = self.quantize(x)
        out[0] = q
        y = x.relu()
        z = out[0] * 3
        return z + y

    def tensor_element(self, x):
        t = torch.zeros_like(x)
        q = self.quantize(x)
        t[0] = q[0]
        y = x.relu()
        return t + y

    def tensor_slice(self, x):
        t = torch.zeros_like(x)
        q = self.quantize(x)
        t[:] = q
        y = x.relu()
        return t + y

    def attribute_store(self, x):
        q = self.quantize(x)
        self.stash = q
        y = x.relu()
        z = self.stash * 3
        return z + y

    def starred_copy(self, x):
        q = self.quantize(x)
        a, *rest = q, x
        y = x.relu()
        z = a * 3
        return z + y
""" + caller_source()


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    q = x * 2
    t = torch.zeros_like(x)
    t[0] = q[0]
    return {
        "dict_store": q * 3,
        "tensor_element": t,
        "tensor_slice": q,
        "attribute_store": q * 3,
        "starred_copy": q * 3,
    }[method] + x.relu()


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge"])
@pytest.mark.parametrize("method", ["dict_store", "tensor_element", "tensor_slice", "attribute_store", "starred_copy"])
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    torch.testing.assert_close(run_checked(code, target, lambda m: m.Caller(method), (x,)), _want(method, x))


@pytest.mark.parametrize("method", ["dict_store", "tensor_element", "tensor_slice", "attribute_store"])
def test_a_store_is_a_read(method: str) -> None:
    """Joined right at the store: nothing overlaps, so the call stays on the caller's stream, as written."""
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert "runtime." not in body


def test_a_starred_copy_is_still_a_copy() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "starred_copy")
    lines = [line.strip() for line in body.splitlines()]
    assert lines.index("a, *rest = q, x") < lines.index('runtime.wait("m.Model.quantize.join")')
    assert lines.index("y = x.relu()") < lines.index('runtime.wait("m.Model.quantize.join")')
