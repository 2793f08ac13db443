"""A parameter kept for a side stream stays kept when its caller only hands it on after the call.

``helper(x, c)`` reads ``c`` on "side", reads it again on the caller's stream and allocates before the join,
which comes before it returns. Its one caller, in the same file, passes ``c`` again after the call, to
``maybe``, which reads it only where ``self.read_again`` holds. A captured graph drops a tensor after its last
use, not when the Python name dies: with ``read_again`` off, the last use of ``c`` is inside ``helper``, before
the join, so ``helper``'s ``record_stream`` is what keeps it. A rule taking "the caller reads it again after
the call" from a name passed on (cann_v4_compressor's ``self.sparse_attn(..., cos, sin, ...)``, whose
indexer reads them only in the layers of compress ratio 4) would race there.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, read_again=True):
        super().__init__()
        self.read_again = read_again

    @on_stream("side")
    def side(self, c):
        return c * 2

    def helper(self, x, c):
        y = self.side(c)
        z = c + x
        w = z * 3
        return y + w

    def maybe(self, x, c):
        if self.read_again:
            return x + c
        return x

    def forward(self, x):
        c = x * 1
        out = self.helper(x, c)
        return self.maybe(out, c)
""" + caller_source()

_KEEP = 'runtime.record_stream(c, "side")'


def _code() -> str:
    return transform_source(SOURCE, path="m.py", target="portable")


def _want(x: torch.Tensor, read_again: bool) -> torch.Tensor:
    out = x * 2 + (x + x) * 3
    return out + x if read_again else out


def test_the_helper_keeps_its_parameter() -> None:
    assert method_source(_code(), "helper").count(_KEEP) == 1


@pytest.mark.parametrize("read_again", [True, False])
def test_race_free_and_exact(read_again: bool) -> None:
    x = torch.randn(2, 3)
    got = run_checked(_code(), "portable", lambda m: m.Caller("forward", read_again), (x,))
    torch.testing.assert_close(got, _want(x, read_again))


def test_without_the_keep_a_caller_that_does_not_read_it_races() -> None:
    code = _code()
    body = method_source(code, "helper")
    without = code.replace(body, body.replace(_KEEP, "pass"))
    x = torch.randn(2, 3)
    torch.testing.assert_close(
        run_checked(without, "portable", lambda m: m.Caller("forward", True), (x,)), _want(x, True)
    )
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Caller("forward", False), (x,))
