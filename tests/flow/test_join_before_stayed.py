"""A call is joined before a later call of its own stream that stays on the caller's stream, where that later call
is the last reader of one of its inputs (torchair MLA: ``rope_single`` after ``kv_rmsnorm_rope_cache``, both on
"mla_secondary", reads ``cos`` and ``sin`` last): the user's schedule ran it after the call anyway, and the input
needs no ``record_stream``.

Not moved: a later call of another stream (it would overlap), of another guard, right after the call (the call
would overlap nothing), or one reading no input that is not read after the old join. Each case runs under the race
checker with inputs its caller made; where the keep stays, dropping it is a race the checker reports.
"""

from __future__ import annotations

import pytest
import torch

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, on=True):
        super().__init__()
        self.on = on

    @on_stream("side", when="self.on")
    def work(self, x, a):
        return x * a

    @on_stream("side", when="self.on")
    def rope(self, q, a):
        return q + a

    @on_stream("other", when="self.on")
    def rope_other(self, q, a):
        return q + a

    @on_stream("side")
    def rope_always(self, q, a):
        return q + a

    def moved(self, x, a):
        w = self.work(x, a)
        q = x * 3
        q = self.rope(q, a)
        r = q * 2
        return w + r

    def other_stream(self, x, a):
        w = self.work(x, a)
        q = x * 3
        q = self.rope_other(q, a)
        r = q * 2
        return w + r

    def other_guard(self, x, a):
        w = self.work(x, a)
        q = x * 3
        q = self.rope_always(q, a)
        r = q * 2
        return w + r

    def right_after(self, x, a):
        w = self.work(x, a)
        q = self.rope(x, a)
        r = q * 3
        return w + r

    def read_after(self, x, a):
        w = self.work(x, a)
        q = x * 3
        q = self.rope(q, a)
        r = q * 2
        return w + r + a


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x, a):
        return getattr(self.model, self.method)(x * 1, a * 1)
"""

MOVED = ("moved",)
KEPT = ("other_stream", "other_guard", "right_after")


def _method(code: str, name: str) -> str:
    start = code.index(f"    def {name}(")
    return code[start : code.find("\n    def ", start + 1)]


def _want(method: str, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    if method == "right_after":
        return x * a + (x + a) * 3
    return x * a + (x * 3 + a) * 2 + (a if method == "read_after" else 0)


@pytest.mark.parametrize("method", [*MOVED, *KEPT, "read_after"])
def test_joined_before_the_stayed_call_only_where_it_spares_a_keep(method: str) -> None:
    body = _method(transform_source(SOURCE, path="m.py", target="portable"), method)
    wait, stayed = body.index('runtime.wait("m.Model.work.join")'), body.index("= self.rope")
    assert (wait < stayed) is (method in MOVED)
    assert ('runtime.record_stream(a, "side")' in body) is (method in KEPT)


@pytest.mark.parametrize("method", [*MOVED, *KEPT, "read_after"])
def test_race_free_and_exact(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x, a = torch.randn(4, 3), torch.randn(4, 3)
    torch.testing.assert_close(run_checked(code, "portable", lambda m: m.Caller(method), (x, a)), _want(method, x, a))


@pytest.mark.parametrize("method", KEPT)
def test_dropping_the_kept_input_races(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    start = code.index(f"    def {method}(")
    end = code.find("\n    def ", start + 1)
    keep = 'runtime.record_stream(a, "side")'
    lines = [line for line in code[start:end].splitlines(keepends=True) if keep not in line]
    with pytest.raises(StreamRaceError):
        run_checked(code[:start] + "".join(lines) + code[end:], "portable", lambda m: m.Caller(method), _inputs())


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(4, 3), torch.randn(4, 3)
