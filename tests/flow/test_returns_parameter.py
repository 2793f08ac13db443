"""An input a side call returns as it came needs no ``record_stream`` where the caller reads that result after the
join: the caller holds its memory until then (torchair MLA's ``write_slots(cache, slots, values)`` writes the
cache in place and returns it; ``nope_cache, pe_cache = self.kv_rmsnorm_rope_cache(..., kv_cache, slots)``).

Each case runs under the race checker, with inputs its caller made right before and an allocation on the caller's
stream before the join. Where the rule must not apply (the call also reads an item it does not return, the helper
returns a new tensor, the helper's name is rebound, the result is not read after the join), the input stays kept,
and dropping that keep is a race the checker reports.
"""

from __future__ import annotations

import ast

import pytest
import torch

from codegen.driver.api import transform_source
from codegen.index.returned import returned_params
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


def write_slots(cache, slots, values):
    cache.index_copy_(0, slots, values)
    return cache


def added(cache, slots, values):
    return cache.index_add(0, slots, values)


def copied(cache, slots, values):
    cache.index_copy_(0, slots, values)
    return cache


copied = added


class Cache(nn.Module):
    @on_stream("side")
    def fill(self, caches, slots, values):
        return write_slots(caches[0], slots, values + caches[0][:3]), write_slots(caches[1], slots, values * 2)

    @on_stream("side")
    def fill_one(self, cache, slots, values):
        return write_slots(cache, slots=slots, values=values)

    @on_stream("side")
    def fill_first(self, caches, slots, values):
        return write_slots(caches[0], slots, values + caches[1][:3])

    @on_stream("side")
    def add(self, caches, slots, values):
        return added(caches[0], slots, values), added(caches[1], slots, values)

    @on_stream("side")
    def copy(self, caches, slots, values):
        return copied(caches[0], slots, values), copied(caches[1], slots, values)

    def both(self, caches, slots, values):
        first, second = self.fill(caches, slots, values)
        y = slots * 5
        return first.sum() + second.sum() + y.sum()

    def whole(self, caches, slots, values):
        cache = caches[0] * 1
        filled = self.fill_one(cache, slots, values)
        y = slots * 5
        return filled.sum() + y.sum()

    def first_only(self, caches, slots, values):
        first = self.fill_first(caches, slots, values)
        y = slots * 5
        return first.sum() + y.sum()

    def new_tensors(self, caches, slots, values):
        first, second = self.add(caches, slots, values)
        y = slots * 5
        return first.sum() + second.sum() + y.sum()

    def rebound(self, caches, slots, values):
        first, second = self.copy(caches, slots, values)
        y = slots * 5
        return first.sum() + second.sum() + y.sum()

    def dropped(self, caches, slots, values):
        first, second = self.fill(caches, slots, values)
        first = slots * 5
        return first.sum() + second.sum()


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Cache(), method

    def forward(self, x, slots, values):
        caches = (x * 1, x * 2)
        return getattr(self.model, self.method)(caches, slots * 1, values * 1)
"""

HELD = {"both": "caches", "whole": "cache"}
KEPT = {"first_only": "caches", "new_tensors": "caches", "rebound": "caches", "dropped": "caches"}


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.find("\n    def ", start + 1)]


def _inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(8, 3), torch.tensor([6, 1, 3]), torch.randn(3, 3)


def _want(method: str, x: torch.Tensor, slots: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    first, second = x.clone(), x * 2
    if method == "new_tensors" or method == "rebound":
        first, second = first.index_add(0, slots, values), second.index_add(0, slots, values)
        return first.sum() + second.sum() + (slots * 5).sum()
    if method == "first_only":
        return first.index_copy(0, slots, values + second[:3]).sum() + (slots * 5).sum()
    if method == "whole":
        return first.index_copy(0, slots, values).sum() + (slots * 5).sum()
    first, second = first.index_copy(0, slots, values + first[:3]), second.index_copy(0, slots, values * 2)
    if method == "dropped":
        return (slots * 5).sum() + second.sum()
    return first.sum() + second.sum() + (slots * 5).sum()


@pytest.mark.parametrize("method", [*HELD, *KEPT])
def test_an_input_is_kept_only_where_no_result_read_after_the_join_holds_it(method: str) -> None:
    body = _method(transform_source(SOURCE, path="m.py", target="portable"), method)
    name = {**HELD, **KEPT}[method]
    assert (f'runtime.record_stream({name}, "side")' in body) is (method in KEPT)
    assert body.count("runtime.record_stream(") == (2 if method in HELD else 3)  # slots, values: read before


@pytest.mark.parametrize("method", [*HELD, *KEPT])
def test_race_free_and_exact(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x, slots, values = _inputs()
    got = run_checked(code, "portable", lambda m: m.Caller(method), (x, slots, values))
    torch.testing.assert_close(got, _want(method, x, slots, values))


@pytest.mark.parametrize("method", list(KEPT))
def test_dropping_the_kept_input_races(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    keep = f'runtime.record_stream({KEPT[method]}, "side")'
    start = code.index(f"    def {method}(")
    end = code.find("\n    def ", start + 1)
    lines = [line for line in code[start:end].splitlines(keepends=True) if keep not in line]
    stripped = code[:start] + "".join(lines) + code[end:]
    with pytest.raises(StreamRaceError):
        run_checked(stripped, "portable", lambda m: m.Caller(method), _inputs())


def test_a_helper_of_another_file_not_in_the_run_is_unknown() -> None:
    source = SOURCE.replace("def write_slots(", "def _unused(").replace(
        "from npudsl import on_stream\n", "from npudsl import on_stream\nfrom .layers import write_slots\n"
    )
    # the helper the run does not hold may write every argument: read none of them after the call
    source = source.replace("values)\n        y = slots * 5", "values)\n        y = torch.ones(1) * 5")
    body = _method(transform_source(source, path="pkg/m.py", target="portable"), "both")
    # unknown, it may also write any argument (``imported_writes.py``); nothing reads one after the call, so it
    # overlaps ``torch.ones(1) * 5`` and keeps ``caches`` (no return fact drops that keep)
    assert 'runtime.record_stream(caches, "side")' in body


@pytest.mark.parametrize(
    ("source", "facts"),
    [
        ("def f(a, b):\n    a.add_(b)\n    return a\n", {"f:param": "0 a"}),
        ("def f(a, *, out):\n    out.copy_(a)\n    return out\n", {"f:param": "-1 out"}),
        ("def f(a):\n    a = a + 1\n    return a\n", {}),  # rebound: a new tensor
        ("def f(a):\n    if a.any():\n        return a\n    return a\n", {}),  # two returns
        ("def f(a):\n    yield a\n    return a\n", {}),  # a generator
        ("import functools\n@functools.cache\ndef f(a):\n    return a\n", {}),  # decorated
        ("def f(a):\n    return a\nf = g\n", {}),  # rebound in the module
        ("def f(a):\n    return a\ndef h():\n    global f\n    f = g\n", {}),  # rebound by a function
        ("try:\n    pass\nexcept E as f:\n    pass\ndef f(a):\n    return a\n", {}),
    ],
)
def test_the_facts_are_made_only_where_certain(source: str, facts: dict[str, str]) -> None:
    assert returned_params(ast.parse(source)) == facts
