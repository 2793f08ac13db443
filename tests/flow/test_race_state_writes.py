"""A side body that writes Python state or a buffer the caller reads before the call's join (``writes.py``).

The caller reads, right after the call and before it reads the call's result, what the body wrote: an entry of its
object's dict (``self.cache[k] = t``), a list or dict it was given (``acc.append(t)``, ``d.update(...)``), a buffer
written in place (``self.buf.copy_(...)``, through a view of it: ``self.buf.view(-1).add_(1)``, or through a local
that holds it or a view of it: ``v = self.buf[0]; v.add_(1)``, ``cache = self.cache; cache[k] = t``), a container
it returns holding its argument's view. Each such read waits for the call. A body that only reads the state, or
writes a buffer the caller does not read, still overlaps the caller's read. Every case runs under the race checker
(portable and GE's stand-in) and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

_SIDES = {
    "stored": ("self.cache['k'] = x * 2", "self.cache['k']"),
    "stored_local": ("cache = self.cache\n        cache['k'] = x * 2", "self.cache['k']"),
    "buffer": ("self.buf.copy_(x * 2)", "self.buf"),
    "buffer_view": ("self.buf.view(-1).add_(1)", "self.buf"),
    "buffer_local": ("v = self.buf[0]\n        v.add_(1)", "self.buf"),
    "buffer_local_view": ("v = self.buf.view(-1)\n        w = v[:3]\n        w.mul_(2)", "self.buf"),
    "reads_only": ("y = self.buf * 1", "self.buf"),
    "other_buffer": ("self.other.add_(1)", "self.buf"),
}
_GIVEN = {
    "appended": ("acc.append(x * 2)", "acc[-1]"),
    "updated": ("d.update(k=x * 2)", "d['k']"),
}


def _side(name: str, body: str, params: str) -> str:
    return f"""
    @on_stream("side")
    def {name}(self, x{params}):
        {body}
        return x * 3
"""


def _caller(name: str, read: str, params: str) -> str:
    made = "        acc, d = [x], {'k': x}\n" if params else ""
    return f"""
    def m_{name}(self, x):
{made}        z = self.{name}(x{params})
        w = ({read}).sum() * 1
        return z + w
"""


_PARAMS = ", acc, d"
SOURCE = f"""\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2, 3))
        self.register_buffer("other", torch.ones(2, 3))
        self.cache = {{"k": torch.ones(2, 3)}}

{"".join(_side(n, b, "") + _caller(n, r, "") for n, (b, r) in _SIDES.items())}
{"".join(_side(n, b, _PARAMS) + _caller(n, r, _PARAMS) for n, (b, r) in _GIVEN.items())}
    @on_stream("side")
    def returned(self, x):
        return [x[0], x * 3]

    def m_returned(self, x):
        out = self.returned(x)
        w = out[0].sum() * 1
        return out[1] + w


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(), method

    def forward(self, x):
        return getattr(self.model, "m_" + self.method)(x * 1)
"""

_WRITES = [n for n in [*_SIDES, *_GIVEN] if n not in ("reads_only", "other_buffer")]


def _expected(name: str, x: torch.Tensor) -> torch.Tensor:
    buf = torch.ones(2, 3)
    if name in ("stored", "stored_local", "appended", "updated"):
        read = x * 2
    elif name == "buffer":
        read = x * 2
    elif name in ("buffer_view",):
        read = buf + 1
    elif name == "buffer_local":
        read = torch.stack([buf[0] + 1, buf[1]])
    elif name == "buffer_local_view":
        read = buf.view(-1).clone()
        read[:3] *= 2
    elif name == "returned":
        return x * 3 + x[0].sum()
    else:
        read = buf
    return x * 3 + read.sum()


@pytest.mark.parametrize("name", [*_WRITES, "returned"])
def test_the_read_of_what_the_body_wrote_waits(name: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), f"m_{name}")
    if "runtime.stream(" in body:  # overlapped: the read comes after the join's wait
        assert body.index(f'runtime.wait("m.Model.{name}.join")') < body.index("w = (")


@pytest.mark.parametrize("name", ["reads_only", "other_buffer"])
def test_a_body_that_writes_nothing_the_caller_reads_still_overlaps(name: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), f"m_{name}")
    assert body.index("runtime.stream(") < body.index("w = (") < body.index(f'runtime.wait("m.Model.{name}.join")')


@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("name", [*_SIDES, *_GIVEN, "returned"])
def test_race_free_and_exact(name: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(name), (x,))
    torch.testing.assert_close(got, _expected(name, x))
