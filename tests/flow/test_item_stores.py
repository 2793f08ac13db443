"""A stream call's result stored into an item of a list or dict the caller owns binds it (``item_stores.py``).

vllm-ascend's dual-batch overlap keeps each micro-batch's result in a list item (``outs[i] = self.side(h)``).
When the list is certainly one (a display, ``[None] * n``, a parameter annotated ``list[...]``) and the caller
reads it only as ``outs[...]``, ``len(outs)`` or in a ``return``, the call joins before the first statement
that reads the list, not at once: micro-batch 0's side call overlaps micro-batch 1's work, one fork per
iteration, one wait after the loop. A store into an item of such a list writes no tensor (``inp[i] = ...`` in
the next iteration does not join the call that reads ``inp[i]``; the item it reads is kept alive alone). The
rule does not apply (the call stays on the caller's stream, NPD501) where the store may be a tensor's copy
kernel (an unannotated parameter, a tensor), or where something else may reach the list (an alias, a call it is
given). Every case runs race-checked on two targets and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import ast

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import generated, sync_counts

from codegen.lower.flow import item_stores, own_containers
from npudsl import StreamRaceError

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def micro_batches(self, x):
        xs = list(x.chunk(2))
        outs = [None] * len(xs)
        for i in range(len(xs)):
            h = xs[i] + 1
            outs[i] = self.side(h)
        return torch.cat(outs)

    def inputs_in_a_list(self, x):
        inp: list[torch.Tensor | None] = [None, None]
        outs: list[torch.Tensor | None] = [None, None]
        for i in range(2):
            inp[i] = x * (i + 1)
            outs[i] = self.side(inp[i])
        return outs[0] + outs[1]

    def item_written(self, x):
        inp = [x * 1, x * 2]
        outs = [None]
        outs[0] = self.side(inp[0])
        z = x - 1
        inp[0].mul_(3)
        w = x * 5
        return outs[0] + inp[0] + z + w

    def read_before_join(self, x):
        outs = [None]
        outs[0] = self.side(x + 1)
        z = x - 1
        y = outs[0] * 3
        w = x * 5
        return y + z + w

    def keyed(self, x):
        d = {}
        d["a"] = self.side(x + 1)
        z = x - 1
        return d["a"] + z

    def unknown(self, x):
        buf = self.buffers_of(x)
        buf[0] = self.side(x + 1)
        z = x - 1
        return buf[0] + z

    def aliased(self, x):
        outs = [None]
        same = outs
        outs[0] = self.side(x + 1)
        z = x - 1
        y = same[0] * 3
        w = x * 5
        return y + z + w

    def tensor_store(self, x):
        buf = torch.zeros(1, 4, 3)
        buf[0] = self.side(x + 1)
        z = x - 1
        return buf[0] + z

    def buffers_of(self, x):
        return [None]
""" + caller_source()

_DEFERRED = ["micro_batches", "inputs_in_a_list", "item_written", "read_before_join", "keyed"]
_AT_ONCE = ["unknown", "aliased", "tensor_store"]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    if method == "micro_batches":
        return torch.cat([(c + 1) * 2 for c in x.chunk(2)])
    if method == "inputs_in_a_list":
        return x * 2 + x * 4
    if method == "item_written":
        return x * 2 + x * 3 + x - 1 + x * 5
    if method in ("read_before_join", "aliased"):
        return (x + 1) * 2 * 3 + x - 1 + x * 5
    return (x + 1) * 2 + x - 1


def _body(method: str) -> str:
    return method_source(generated(SOURCE), method)


def _sync(method: str, target: str) -> dict[str, int]:
    x = torch.randn(4, 3)
    return sync_counts(generated(SOURCE, target), target, method, x, _want(method, x))


def test_one_fork_per_micro_batch_and_one_wait_after_the_loop() -> None:
    body = _body("micro_batches")
    loop, after = body.split("for i in range(len(xs)):")[1].split("side_forked = True")
    assert 'runtime.wait("m.Model.side.fork")' in loop and 'runtime.wait("m.Model.side.join")' not in loop
    assert after.count('runtime.wait("m.Model.side.join")') == 1
    assert 'runtime.record_stream(h, "side")' in loop, "h is rebound by the next iteration before the join"


def test_a_store_into_an_input_list_is_no_write() -> None:
    """``inp[i] = ...`` of the next iteration writes no tensor the first call reads: no join in the loop; the
    item the call reads is kept alone (bound to a fresh name), not the list nor ``i``."""
    body = _body("inputs_in_a_list")
    loop = body.split("for i in range(2):")[1].split("side_forked = True")[0]
    assert 'runtime.wait("m.Model.side.join")' not in loop
    assert "= inp[i]" in loop and 'runtime.record_stream(inp, "side")' not in loop
    assert 'runtime.record_stream(i, "side")' not in loop


def test_an_in_place_write_of_an_item_joins_first() -> None:
    """``inp[0].mul_(3)`` writes the tensor the call reads (a store into the list would not)."""
    body = _body("item_written")
    assert body.index('runtime.wait("m.Model.side.join")') < body.index("inp[0].mul_(3)")


def test_a_read_of_the_list_joins_first() -> None:
    body = _body("read_before_join")
    assert body.index('runtime.wait("m.Model.side.join")') < body.index("y = outs[0] * 3")


@pytest.mark.parametrize("method", _AT_ONCE)
def test_the_rule_does_not_apply(method: str) -> None:
    """An unannotated parameter or a call's result may be a tensor (a store into it is a copy kernel), an alias
    reaches the list behind the analysis' back, a tensor's item store is a copy: the call stays as written."""
    body = _body(method)
    assert "runtime.stream(" not in body and "runtime.wait(" not in body


@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", _DEFERRED + _AT_ONCE)
def test_race_free_and_exact(method: str, target: str) -> None:
    assert (_sync(method, target)["switch"] > 0) is (method in _DEFERRED)


@pytest.mark.parametrize(
    ("method", "want"),
    [
        ("micro_batches", {"switch": 2, "record": 4, "wait": 3, "record_stream": 2}),
        ("inputs_in_a_list", {"switch": 2, "record": 3, "wait": 3, "record_stream": 1}),  # one join record: the last
        ("read_before_join", {"switch": 1, "record": 2, "wait": 2, "record_stream": 1}),
        ("keyed", {"switch": 1, "record": 2, "wait": 2, "record_stream": 1}),
    ],
)
def test_sync_calls(method: str, want: dict[str, int]) -> None:
    """Two micro-batches: a fork each (record and wait), a join record each, one wait after the loop, the input
    each iteration rebinds kept (over ``range(2)``, the loop's last call joined right after it, only where another
    iteration follows: ``next_iteration.py``); one call: its fork, its join, its computed input kept."""
    assert dict(_sync(method, "portable")) == want


def test_an_alias_would_race(monkeypatch: pytest.MonkeyPatch) -> None:
    """Taken for the caller's own list although ``same`` reaches it, the call would join at no read of
    ``same[0]``: the main stream reads the side stream's result before it is done."""
    monkeypatch.setattr(own_containers, "_private", lambda *_: True)
    with pytest.raises(StreamRaceError):
        _sync("aliased", "portable")


@pytest.mark.parametrize(
    "body",
    [
        "xs = []\n    [(xs := t) for t in ys]",  # a comprehension's walrus binds in the function
        "xs = []\n    del xs\n    xs = ys",
        "xs = []\n    for xs in ys:\n        pass",
        "xs = []\n    with ctx as xs:\n        pass",
        "xs = []\n    xs, other = ys",
    ],
)
def test_a_name_bound_otherwise_is_no_container(body: str) -> None:
    fn = ast.parse(f"def f(ys, ctx):\n    {body}\n    xs[0] = 1\n    return xs[0]\n").body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert item_stores.containers(fn) == frozenset()


def test_a_list_bound_only_to_displays_is_a_container() -> None:
    fn = ast.parse("def f(ys):\n    xs = []\n    xs = [0] * 2\n    xs[0] = 1\n    return xs[0]\n").body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert item_stores.containers(fn) == frozenset({"xs"})
