"""A result that only calls on one stream bind is that stream's own wherever a later call there reads it.

``if k is not None: k, s = self.quant(k, k_cache)`` then ``if k is not None and s is not None: self.scales(s,
s_cache)`` on the same stream (vllm-ascend's DeepSeek-V4 indexer: the key cache, then the scale cache): ``s`` is
unbound where ``quant`` did not run, and nothing else binds it, so where ``scales`` reads it, ``quant`` made it on
that stream: no ``record_stream`` (it was one before, on a value the stream made itself). Where the caller also
binds ``s`` itself on another path, the keep stays. Every case runs race-checked on both paths and equals the
same arithmetic on one stream.
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
    def __init__(self, big=True):
        super().__init__()
        self.big = big

    @on_stream("s")
    def quant(self, k, k_cache):
        k_cache.copy_(k * 2)
        return k_cache, k.abs() + 1

    @on_stream("s")
    def scales(self, s, s_cache):
        s_cache.copy_(s)

    def only_calls_bind(self, x):
        k_cache, s_cache = x * 0, x * 0
        k = x if self.big else None
        if k is not None:
            k, s = self.quant(k, k_cache)
        q = x * 3
        if k is not None and s is not None:
            self.scales(s, s_cache)
        h = q * 2
        return h + k_cache + s_cache

    def also_bound_here(self, x):
        k_cache, s_cache = x * 0, x * 0
        k = x if self.big else None
        if k is not None:
            k, s = self.quant(k, k_cache)
        else:
            s = x.abs() + 1
        q = x * 3
        self.scales(s, s_cache)
        h = q * 2
        return h + k_cache + s_cache
""" + caller_source()


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_a_value_only_calls_on_the_stream_bind_needs_no_keep() -> None:
    body = _body("only_calls_bind")
    assert 'runtime.record_stream(s, "s")' not in body
    assert body.count("runtime.record_stream(") == 1  # k, the caller's, for quant


def test_a_value_the_caller_binds_too_is_kept() -> None:
    assert 'runtime.record_stream(s, "s")' in _body("also_bound_here")


def _want(method: str, x: torch.Tensor, big: bool) -> torch.Tensor:
    if method == "only_calls_bind":
        return x * 6 + (x * 2 + x.abs() + 1 if big else 0)
    return x * 6 + (x * 2 if big else 0) + x.abs() + 1


@pytest.mark.parametrize("big", [True, False])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", ["only_calls_bind", "also_bound_here"])
def test_race_free_and_exact(method: str, target: str, big: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method, big), (x,))
    torch.testing.assert_close(got, _want(method, x, big))
