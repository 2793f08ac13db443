"""A name bound to what a dropout may hand back holds the dropout's input: an op on it later reads the input.

``_mix(t)`` hands ``t`` to a side stream; its caller then runs ``z = F.dropout(t, 0.1, training=self.training)`` and
``y + z``. In training the dropout runs an op on ``t``; in eval ATen's ``dropout`` hands ``t`` back as it came, so
``z`` is ``t`` and ``y + z`` reads it. Either way the caller's stream reads ``t`` after ``_mix`` joined its side call,
so the side stream needs no ``record_stream`` for it (``held_params.py``). On main the dropout counted as no read and
``z`` as new memory, and the keep stayed. Whether the result may be the argument is the table's (``PASSED``,
``TORCH_PASSED``: ``torch_functional.handed_back_args``), read by ``used_calls.handed_names``. The keep stays where
nothing reads the result in an op (``z`` dropped, rebound, or only its shape read): in eval nothing reads ``t``.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl import StreamRaceError
from npudsl.testing.targets import run_checked

MODEL = """\
import torch
from torch import nn
import torch.nn.functional as F
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self, training=False):
        super().__init__()
        self.train(training)

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
LATER
"""
CASES = {  # what the caller does after ``_mix(t)``; whether ``_mix`` keeps ``x`` for the side stream
    "bound": ("z = F.dropout(t, 0.1, training=self.training)\nreturn y + z", False),
    "inline": ("return y + F.dropout(t, 0.1, training=self.training)", False),
    "torch_dropout": ("z = torch.dropout(t, 0.1, self.training)\nreturn y + z", False),
    "rebound_input": ("t = F.dropout(t, 0.1, training=self.training)\nreturn y + t", False),
    "view_of_result": ("z = F.dropout(t, 0.1, training=self.training)\nreturn y + z[0]", False),
    "result_dropped": ("z = F.dropout(t, 0.1, training=self.training)\nreturn y", True),
    "result_rebound": ("z = F.dropout(t, 0.1, training=self.training)\nz = y * 2\nreturn y + z", True),
    "shape_only": ("z = F.dropout(t, 0.1, training=self.training)\nreturn y + z.shape[-1]", True),
}
KEEP = 'runtime.record_stream(x, "side")'


def _source(case: str) -> str:
    later = "\n".join(f"        {line}" for line in CASES[case][0].splitlines())
    return MODEL.replace("LATER", later) + caller_source()


@pytest.mark.parametrize("case", CASES)
def test_the_keep_goes_where_the_result_is_read(case: str) -> None:
    body = method_source(transform_source(_source(case), path="m.py", target="portable"), "_mix")
    assert (KEEP in body) is CASES[case][1], body


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("case", CASES)
def test_race_free_and_exact(case: str, target: str, training: bool) -> None:
    source = _source(case)
    x = torch.randn(2, 3)
    reference = transform_source(source.replace('@on_stream("side")', ""), path="m.py", target=target)
    make = lambda m: m.Caller("caller", training)  # noqa: E731
    torch.manual_seed(0)  # a dropout in training draws its mask
    expected = run_checked(reference, target, make, (x,))
    torch.manual_seed(0)
    got = run_checked(transform_source(source, path="m.py", target=target), target, make, (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_without_the_keep_a_dropout_whose_result_is_not_read_races_in_eval() -> None:
    source, x = _source("shape_only"), torch.randn(2, 3)
    code = transform_source(source, path="m.py", target="portable")
    body = method_source(code, "_mix")
    without = code.replace(body, body.replace(KEEP, "pass"))
    run_checked(without, "portable", lambda m: m.Caller("caller", True), (x,))  # training: the dropout reads ``t``
    with pytest.raises(StreamRaceError, match="record_stream"):
        run_checked(without, "portable", lambda m: m.Caller("caller", False), (x,))
