"""A value made on one side stream and read on another needs no ``record_stream`` when the maker's next call
first waits for the reader's stream at or after the read (omni-infer's top-k: packed on "compute", gathered
on "comm", unpacked on "compute" once the gathers are done): the maker allocates nothing before the read is
done. When the maker's next call does not wait for the reader, the value is kept alive. Both run under the
race checker, called with inputs their caller made right before."""

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


class TopK(nn.Module):
    @on_stream("compute")
    def pack(self, x):
        return x * 2

    @on_stream("comm")
    def gather(self, x):
        return x + 1

    @on_stream("comm")
    def gather_again(self, x):
        return x * 3

    @on_stream("compute")
    def unpack(self, x):
        return x - 1

    def waits(self, x):
        packed = self.pack(x)
        local = self.gather(packed)
        y = x * 5
        every = self.gather_again(local)
        out = self.unpack(every)
        z = y * 2
        return out + z

    def does_not_wait(self, x):
        packed = self.pack(x)
        local = self.gather(packed)
        y = x * 5
        other = self.unpack(y)
        z = y * 2
        return local + other + z

""" + caller_source("TopK")


@pytest.mark.parametrize(("method", "kept"), [("waits", False), ("does_not_wait", True)])
def test_the_packed_value_is_kept_only_when_its_maker_may_allocate(method: str, kept: bool) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert ('runtime.record_stream(packed, "comm")' in body) is kept


@pytest.mark.parametrize("method", ["waits", "does_not_wait"])
def test_race_free_and_exact(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    y = x * 5
    want = ((x * 2 + 1) * 3 - 1) + y * 2 if method == "waits" else (x * 2 + 1) + (y - 1) + y * 2
    torch.testing.assert_close(run_checked(code, "portable", lambda m: m.Caller(method), (x,)), want)
