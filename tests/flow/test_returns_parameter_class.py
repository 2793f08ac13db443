"""A decorated class (``@on_stream`` on the class: its ``forward``) that returns an input as it came holds it for
its caller, as a decorated method does (``test_returns_parameter.py``): sglang's fused MLA preprocess returns
``positions`` at the end of its tuple, and the caller reads it after the join, so it needs no ``record_stream``.

Race-checked, with an allocation on the caller's stream before the join. Where the rule must not apply (the
result is not read after the join, the class has a decorator that is not npudsl's, its ``forward`` has one, it
returns a new tensor), the input stays kept, and dropping that keep is a race the checker reports.
"""

from __future__ import annotations

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import functools

import torch
from torch import nn
from npudsl import on_stream


def tagged(cls):
    return cls


@on_stream("side")
class Prologue(nn.Module):
    def forward(self, x, pos):
        return x * pos, pos


@on_stream("side")
@tagged
class Tagged(nn.Module):
    def forward(self, x, pos):
        return x * pos, pos


@on_stream("side")
class Wrapped(nn.Module):
    @functools.wraps(lambda self, x, pos: None)
    def forward(self, x, pos):
        return x * pos, pos


@on_stream("side")
class Fresh(nn.Module):
    def forward(self, x, pos):
        return x * pos, pos + 0


class Attention(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.pre = Prologue()
        self.tagged = Tagged()
        self.wrapped = Wrapped()
        self.fresh = Fresh()
        self.method = method

    def held(self, x, pos):
        y, pos = self.pre(x, pos)
        z = x * 5
        return y + z + pos

    def not_read(self, x, pos):
        y, pos = self.pre(x, pos)
        z = x * 5
        return y + z

    def foreign_class(self, x, pos):
        y, pos = self.tagged(x, pos)
        z = x * 5
        return y + z + pos

    def foreign_forward(self, x, pos):
        y, pos = self.wrapped(x, pos)
        z = x * 5
        return y + z + pos

    def new_tensor(self, x, pos):
        y, pos = self.fresh(x, pos)
        z = x * 5
        return y + z + pos

    def forward(self, x):
        return getattr(self, self.method)(x * 1, x * 2)
"""

HELD = ["held"]
KEPT = ["not_read", "foreign_class", "foreign_forward", "new_tensor"]


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.find("\n    def ", start + 1)]


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    pos = x * 2
    return x * pos + x * 5 + (0 if method == "not_read" else pos)


@pytest.mark.parametrize("method", HELD + KEPT)
def test_the_input_is_kept_only_where_a_result_read_after_the_join_holds_it(method: str) -> None:
    body = _method(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert ('runtime.record_stream(pos, "side")' in body) is (method in KEPT)


@pytest.mark.parametrize("method", HELD + KEPT)
def test_race_free_and_exact(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(3, 4)
    torch.testing.assert_close(run_checked(code, "portable", lambda m: m.Attention(method), (x,)), _want(method, x))


@pytest.mark.parametrize("method", ["not_read", "new_tensor"])
def test_dropping_the_kept_input_races(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    body = _method(code, method)
    stripped = code.replace(body, body.replace('runtime.record_stream(pos, "side")', "pass"))
    with pytest.raises(StreamRaceError):
        run_checked(stripped, "portable", lambda m: m.Attention(method), (torch.randn(3, 4),))
