"""A loop over what a call returns holds that call's memory: ``for c in self.pick(xs): c.add_(1)``.

``pick`` returns its argument (``run_results.py`` reads its ``return``), so ``c`` takes the items of ``xs``, which a
side call still reads. On main a loop's or comprehension's target held only what its iterable names as a value
(``xs``, ``(a, b)``, ``enumerate(xs)``); a call's result there held nothing, so the write ran before the side call's
join (race checker: ``a`` read on ``side`` and written in place on ``default`` with no wait between). Now the target
holds whatever the call's result may be (``result_aliases.py``: a function of the run by its ``return``s, one the
run cannot read by every argument), also through ``enumerate`` and in a comprehension. Every case runs race-checked
on every target and equals the same arithmetic on one stream.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import checked_outputs

from codegen.driver.api import transform_source

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream

import extlib


class Model(nn.Module):
    @on_stream("side")
    def side(self, xs):
        return xs[0] * 2 + xs[1]

    def pick(self, xs):
        return xs

    def picked(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        for c in self.pick(xs):
            c.add_(1)
        return r + z + a

    def enumerated(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        for i, c in enumerate(self.pick(xs)):
            c.add_(1)
        return r + z + a

    def comprehended(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        [c.add_(1) for c in self.pick(xs)]
        return r + z + a

    def unread(self, x):
        a = x + 1
        b = x + 2
        xs = [a, b]
        r = self.side(xs)
        z = torch.ones(x.shape) * 3
        for c in extlib.pick(xs):
            c.add_(1)
        return r + z + a
""" + caller_source()

EXTLIB = "def pick(xs):\n    return xs\n"
METHODS = ["picked", "enumerated", "comprehended", "unread"]
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")


@pytest.mark.parametrize("method", METHODS)
def test_the_write_waits_for_the_side_call(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert body.index("z = ") < body.index('runtime.wait("m.Model.side.join")') < body.index("c.add_(1)")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(method: str, target: str, tmp_path, monkeypatch) -> None:
    (tmp_path / "extlib.py").write_text(EXTLIB, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    x = torch.randn(4, 3)
    got = checked_outputs(SOURCE, target, method, x)
    a, b = x + 1, x + 2
    torch.testing.assert_close(got, a * 2 + b + 3 + (a + 1), rtol=0, atol=0)
