"""A tensor a later ``F.dropout`` may hand back unread is no sure read after the call: the keep stays.

``_mix(t)`` hands ``t`` to a side stream and every caller reads ``t`` again after the call, so the side stream
needed no ``record_stream`` for it (``held_params.py``: the caller's read comes after the join and keeps the memory
alive until then). But ``F.dropout(t, 0.1, training=self.training)`` reads ``t`` only in training: in eval ATen's
``dropout`` returns ``t`` as it came, no op reads it, and a captured graph may reuse its memory right after the side
stream's read was issued, where nothing reads its result (``.shape`` reads metadata). On main that call counted as a
read and the ``record_stream`` was dropped. Where an op reads its result (``z = F.dropout(t, ...); y + z``), that op
reads ``t`` in eval and the dropout read it in training, so ``t`` is read either way and the keep goes
(``used_calls.handed_names``, tests/flow/test_handed_back_held.py). What a function
of ``torch.nn.functional`` hands back unread, and where, is read from running it (``functional_probe.py``: the
table's ``PASSED``, ``dropout``'s ``input`` where ``p`` or ``training`` is taken away); ``F.dropout(t, 0.1)``
(training by default) still reads ``t`` and keeps the optimization; ``F.dropout(t, self.p, training=True)`` may
not (``p`` may be 0). The race checker counts the dropout node as a
use of ``t``, so it passes either way: the generated code is what is asserted, with the checker and numerics.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.torch_functional_table import PASSED
from npudsl.testing.targets import run_checked

MODEL = """\
import torch
from torch import nn
import torch.nn.functional as F
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.train(False)
        self.p = 0.0

    @on_stream("side")
    def side(self, x: torch.Tensor) -> torch.Tensor:
        return x * 3

    def _mix(self, x: torch.Tensor) -> torch.Tensor:
        y = self.side(x)
        h = torch.ones(64, 64).sum() + 1
        return y + h

    def caller(self, x):
        t = x * 2
        y = self._mix(t)
        z = LATER
        return y + z
"""
CASES = {
    "mode": ("F.dropout(t, 0.1, training=self.training).shape[-1]", True),
    "no_p": ("F.dropout(t, self.p, training=True).shape[-1]", True),
    "mode_read": ("F.dropout(t, 0.1, training=self.training)", False),
    "training": ("F.dropout(t, 0.1)", False),
    "arithmetic": ("t * 1", False),
}


def _source(case: str) -> str:
    return MODEL.replace("LATER", CASES[case][0]) + caller_source()


def test_the_table_says_what_dropout_hands_back() -> None:
    assert PASSED["dropout"].endswith("| input:p input:training")


@pytest.mark.parametrize("case", CASES)
def test_the_keep_stays_where_the_later_call_may_not_read(case: str) -> None:
    body = method_source(transform_source(_source(case), path="m.py", target="portable"), "_mix")
    assert ('runtime.record_stream(x, "side")' in body) is CASES[case][1], body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("case", CASES)
def test_race_free(case: str, target: str) -> None:
    source = _source(case)
    x = torch.randn(2, 3)
    reference = transform_source(source.replace('@on_stream("side")', ""), path="m.py", target=target)
    torch.manual_seed(0)  # ``F.dropout(t, 0.1)`` in training draws its mask
    expected = run_checked(reference, target, lambda m: m.Caller("caller"), (x,))
    torch.manual_seed(0)
    got = run_checked(transform_source(source, path="m.py", target=target), target, lambda m: m.Caller("caller"), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
