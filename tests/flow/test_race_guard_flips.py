"""A call that may change its guard's object unseen: the guard read at the fork may not be the one read at the join
(``guard_flips.py``, ``stability.py``).

``with runtime.stream(...) if self.on else nullcontext():`` around ``if self.on: q, s = self.quant(...)`` and
``out = self.shared(q, s)`` (``one_block.py``) reads ``self.on`` before ``quant`` runs; ``shared``'s join wait reads
it after. A ``quant`` that turns the flag off by a route no plain store spells (``self.off()``, ``setattr``,
``self.__dict__``, ``turn_off(self)``, a property's setter, ``me = self``, ``vars(self)``) left ``shared``'s result
unwaited on main; so did two blocks (``shared``'s join was taken to cover ``quant``'s), and a call that flips its
own guard that way (``alone``). Such a call now makes guards read from its object unstable after it: each call
reads its own guard into a flag. A call that assigns only other attributes (``self.count``) or calls a submodule
(``self.proj``) changes nothing the guard reads: one block stays. Every case runs under the race checker with
the flag on and off, and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

_FLIPS = {
    "method": "self.off()",
    "setattr": 'setattr(self, "on", False)',
    "dict": 'self.__dict__["on"] = False',
    "function": "turn_off(self)",
    "property": "self.mode = 0",
    "alias": "me = self\n        me.on = False",
    "vars": 'vars(self)["on"] = False',
}
_KEEPS = {"other": "self.count = 1", "submodule": "x = self.proj(x)"}


def _quant(name: str, body: str) -> str:
    return f"""
    @on_stream("side", when="enabled")
    def quant_{name}(self, x: torch.Tensor, enabled: bool) -> tuple[torch.Tensor, torch.Tensor]:
        {body}
        return x * 3, x + 1

    def joined_{name}(self, x):
        q = s = None
        if self.on:
            q, s = self.quant_{name}(x, True)
        if q is None:
            q, s = x * 3, x + 1
        out = self.shared(q, s)
        h = x * 5
        return out + h
"""


SOURCE = f"""\
import torch
from torch import nn
from npudsl import on_stream


def turn_off(m):
    m.on = False


class Model(nn.Module):
    def __init__(self, on: bool):
        super().__init__()
        self.on, self.count = on, 0
        self.proj = nn.Identity()

    @property
    def mode(self):
        return int(self.on)

    @mode.setter
    def mode(self, value):
        self.__dict__["on"] = bool(value)

    def off(self):
        self.on = False

    @on_stream("side", when="self.on")
    def shared(self, q, s):
        return q * s

    @on_stream("side", when="self.on")
    def flips(self, q):
        self.off()
        return q * 2

    def alone(self, x):
        out = self.flips(x)
        h = x * 5
        return out * 0 + x * 2 + h
{"".join(_quant(name, body) for name, body in {**_FLIPS, **_KEEPS}.items())}
""" + caller_source()


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("name", list(_FLIPS))
def test_a_call_that_may_flip_the_guard_keeps_two_blocks(name: str) -> None:
    assert _body(f"joined_{name}").count("runtime.stream(") == 2


@pytest.mark.parametrize("name", list(_KEEPS))
def test_a_call_that_changes_nothing_the_guard_reads_keeps_one_block(name: str) -> None:
    assert _body(f"joined_{name}").count("runtime.stream(") == 1


def test_a_call_that_flips_its_own_guard_unseen_reads_it_once() -> None:
    body = _body("alone")
    assert "flips_forked = self.on" in body and "if self.on:" not in body


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", [*(f"joined_{n}" for n in [*_FLIPS, *_KEEPS]), "alone"])
def test_race_free_and_exact(method: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    got = run_checked(code, "portable", lambda m: m.Caller(method, on), (x,))
    want = x * 2 + x * 5 if method == "alone" else (x * 3) * (x + 1) + x * 5
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", ["joined_method", "joined_other", "alone"])
def test_race_free_on_ge(method: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="ge")
    x = torch.randn(2, 3)
    got = run_checked(code, "ge", lambda m: m.Caller(method, on), (x,))
    want = x * 2 + x * 5 if method == "alone" else (x * 3) * (x + 1) + x * 5
    torch.testing.assert_close(got, want)
