"""Pointing an attribute elsewhere while a side call reads it: no join, but the old tensor kept alive if made here.

``y = self.side(x)`` (whose body reads ``self.stash``), then ``self.swap(z)``, a method of the object whose body is
``self.stash = t``: a store writes no memory of the tensor the side call reads (``state_access.inplace_state``).
Before, the method's store counted as an in-place write and the caller waited for the side call before it, for
nothing; a store spelled in the caller already did not (``state_writes.py``). Where the caller made that tensor
itself before the call (``self.stash = x * 2``), pointing the attribute elsewhere after it drops the tensor, and the
caller's next allocation may reuse its memory while the side stream still reads it: the race checker found this,
with the store spelled in the caller and through the method alike ("made on stream 'default' ... read on stream
'side', then dropped, and stream 'default' allocates again"). The fork now keeps it (``record_stream(self.stash,
"side")``, ``rebound_state.py``). A buffer made in ``__init__`` (a graph input) or an attribute left on the object
needs no keep.
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
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.full((2, 3), 2.0))
        self.stash = None
        self.mode = "a"

    @on_stream("side")
    def side(self, x):
        return x * self.stash

    @on_stream("side")
    def side_buf(self, x):
        return x * self.buf

    def swap(self, t):
        self.stash = t

    def swap_buf(self, t):
        self.buf = t

    def set_mode(self):
        self.mode = "b"

    def bump(self):
        self.stash.add_(1)

    def spelled(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        self.stash = z
        w = torch.ones_like(x) * 3
        return y + z + w

    def by_method(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        self.swap(z)
        w = torch.ones_like(x) * 3
        return y + z + w

    def left_on_object(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        self.set_mode()
        w = torch.ones_like(x) * 3
        return y + z + w

    def written_after(self, x):
        self.stash = x * 2
        y = self.side(x)
        z = x * 5
        self.bump()
        w = torch.ones_like(x) * 3
        return y + z + w

    def buffer_swapped(self, x):
        old = self.buf
        y = self.side_buf(x)
        z = x * 5
        self.swap_buf(old * 0 + 2)
        w = torch.ones_like(x) * 3
        self.swap_buf(old)
        return y + z + w
""" + caller_source()

STORES = {"spelled": "self.stash = z", "by_method": "self.swap(z)"}
NO_KEEP = {"left_on_object": "self.set_mode()", "buffer_swapped": "self.swap_buf(old * 0 + 2)"}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", [*STORES, *NO_KEEP])
def test_the_store_overlaps_the_call(method: str) -> None:
    """No join before the store: the join stays at the end."""
    body = _body(method)
    store = {**STORES, **NO_KEEP}[method]
    assert body.index('runtime.stream("side"') < body.index(store) < body.rindex("runtime.wait(")


@pytest.mark.parametrize("method", STORES)
def test_a_tensor_made_here_is_kept(method: str) -> None:
    assert 'runtime.record_stream(self.stash, "side")' in _body(method)


@pytest.mark.parametrize("method", [*NO_KEEP, "written_after"])
def test_state_made_before_needs_no_keep(method: str) -> None:
    """Made before the call, or left on the object (``self.bump()`` writes it in place: joined first, not kept)."""
    assert "record_stream(self." not in _body(method)


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge"])
@pytest.mark.parametrize("method", [*STORES, *NO_KEEP, "written_after"])
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    read = 2.0 if method == "buffer_swapped" else x * 2  # what the side call reads: the buffer, or the stash
    torch.testing.assert_close(got, x * read + x * 5 + 3, rtol=0, atol=0)
