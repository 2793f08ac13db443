"""A store into an item of the caller's own list reads none of its items (``item_stores.stored_only``).

``outs[1] = x * 3`` loads ``outs`` only to call its ``__setitem__``: it reads no item, so it does not join a
pending call whose result ``outs[0]`` holds (vllm_qwen3_dbo: micro-batch 1's gating stores
``dispatched_input[i]`` while micro-batch 0's dispatch, stored in ``dispatched_input[0]``, runs). A statement
that also reads the list (``outs[1] = outs[0] * 3``) still joins first. Race-free and exact on two targets.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from bench.sync_count import count_graph
from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def stored_between(self, x):
        outs = [None, None]
        outs[0] = self.side(x + 1)
        outs[1] = x * 3
        return outs[0] + outs[1]

    def read_in_store(self, x):
        outs = [None, None]
        outs[0] = self.side(x + 1)
        z = x - 1
        outs[1] = outs[0] * 3
        return outs[1] + z
""" + caller_source()

_WAIT = 'runtime.wait("m.Model.side.join")'


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


def test_a_store_into_the_list_does_not_join() -> None:
    body = _body("stored_between")
    assert "runtime.stream(" in body
    assert body.index("outs[1] = x * 3") < body.index(_WAIT) < body.index("return outs[0] + outs[1]")


def test_a_store_that_reads_the_list_joins_first() -> None:
    body = _body("read_in_store")
    assert body.index(_WAIT) < body.index("outs[1] = outs[0] * 3")


@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", ["stored_between", "read_in_store"])
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(4, 3)
    trace = trace_graph(code, target, lambda m: m.Caller(method), (x,))
    want = (x + 1) * 2 + x * 3 if method == "stored_between" else (x + 1) * 2 * 3 + x - 1
    torch.testing.assert_close(trace.outputs, want)
    assert count_graph(trace.dynamo[0])["switch"] == 1
