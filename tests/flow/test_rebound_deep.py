"""Pointing an attribute elsewhere through a method two deep, ``setattr``, an object of the object or a function.

``self.stash = x * 2``, then ``y = self.side(x)`` (whose body reads ``self.stash``), then the caller points the
attribute elsewhere: ``rebound_state.py`` kept the old tensor for the side stream only where the store was spelled in
the caller or in a method it calls directly. Pointed elsewhere by ``self.reset(z)`` calling ``self._clear(z)``, by
``setattr(self, "stash", z)`` or ``setattr(self, self.name, z)`` (any attribute), by a method storing through
``setattr``, by ``self.sub.swap(z)`` or ``self.sub.stash = z`` (the side call reading ``self.sub.stash``), or by a
function of the module given the object (``put(self, z)``), or by one outside the run (``extlib_rebound.put(self,
z)``: joined before it, but the caller allocates between the side read and that join), the tensor was dropped while
the side stream could still read it, and the caller's next allocation could reuse its memory (the race checker on
main: "made on stream 'default' ... read on stream 'side', then dropped, and stream 'default' allocates again"). The
fork now keeps it (``object_rebinds.py``).
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import extlib_rebound
import torch
from torch import nn
from npudsl import on_stream


def put(obj, t):
    obj.stash = t


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.stash = None

    def swap(self, t):
        self.stash = t


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stash = None
        self.name = "stash"
        self.sub = Sub()

    @on_stream("side")
    def side(self, x):
        return x * self.stash

    @on_stream("side")
    def side_sub(self, x):
        return x * self.sub.stash

    def reset(self, t):
        self._clear(t)

    def _clear(self, t):
        self.stash = t

    def _set(self, t):
        setattr(self, "stash", t)

    def two_deep(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        self.reset(z)
        w = torch.ones_like(x) * 3
        return y + z + w

    def by_setattr(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        setattr(self, "stash", z)
        w = torch.ones_like(x) * 3
        return y + z + w

    def by_setattr_name(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        setattr(self, self.name, z)
        w = torch.ones_like(x) * 3
        return y + z + w

    def setattr_in_method(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        self._set(z)
        w = torch.ones_like(x) * 3
        return y + z + w

    def by_function(self, x):
        put(self, x * 2)
        y = self.side(x)
        z = x * 5
        put(self, z)
        w = torch.ones_like(x) * 3
        return y + z + w

    def object_method(self, x):
        self.sub.stash = x * 2
        y = self.side_sub(x)
        z = x * 5
        self.sub.swap(z)
        w = torch.ones_like(x) * 3
        return y + z + w

    def unread_before(self, x):
        extlib_rebound.put(self, x * 2)
        y = self.side(x)
        z = x * 5
        self.stash = z
        w = torch.ones_like(x) * 3
        return y + z + w

    def unread_after(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        extlib_rebound.put(self, z)
        w = torch.ones_like(x) * 3
        return y + z + w

    def object_spelled(self, x):
        self.sub.stash = x * 2
        y = self.side_sub(x)
        z = x * 5
        self.sub.stash = z
        w = torch.ones_like(x) * 3
        return y + z + w
""" + caller_source()

KEPT = {
    "two_deep": "self.stash",
    "by_setattr": "self.stash",
    "by_setattr_name": "self.stash",
    "setattr_in_method": "self.stash",
    "by_function": "self.stash",
    "object_method": "self.sub.stash",
    "object_spelled": "self.sub.stash",
    "unread_before": "self.stash",  # a function outside the run given the object may store any attribute
    "unread_after": "self.stash",
}

EXTLIB = """\
def put(obj, t):
    obj.stash = t
"""


@pytest.fixture(autouse=True)
def _extlib(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """``extlib_rebound``, a module outside the run, importable where the generated code runs."""
    folder = tmp_path_factory.mktemp("extlib")
    (folder / "extlib_rebound.py").write_text(EXTLIB, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))


@pytest.mark.parametrize("method", KEPT)
def test_the_old_tensor_is_kept(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert f'runtime.record_stream({KEPT[method]}, "side")' in body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", KEPT)
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, x * (x * 2) + x * 5 + 3, rtol=0, atol=0)
