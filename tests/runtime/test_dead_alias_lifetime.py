"""A node that only stands for a tensor's memory (a view, an eval-mode ``F.dropout``) keeps it alive only through its
own users.

``t`` is made on the main stream and read on "side"; the main stream allocates (``u = x + 1``) before it waits for
"side". Without ``record_stream(t, "side")`` that allocation may take ``t``'s memory while "side" still reads it: a
race. On main the race checker missed it where a dead node after the join named ``t``: ``F.dropout(t, 0.1,
training=False)`` hands ``t`` back running no op, ``t.view(-1)`` reads nothing, and nothing reads their results, yet
each counted as the last use of ``t``. Dynamo keeps such nodes, the compilers behind the targets drop them
(``npudsl/race/_lifetime.py``). A dropout whose result the graph reads after the join does keep ``t`` alive (it is
``t``): no race there, on main or now.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers import capture_graph
from npudsl import runtime
from npudsl.race import find_races


class SideReadsThenMainAllocates(nn.Module):
    def __init__(self, tail: str) -> None:
        super().__init__()
        self.tail = tail

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x * 2
        runtime.record("fork")
        with runtime.stream("side"):
            runtime.wait("fork")
            s = t * 3
            runtime.record("join")
        u = x + 1
        runtime.wait("join")
        if self.tail == "eval_dropout":
            F.dropout(t, 0.1, training=False)
        elif self.tail == "no_p_dropout":
            torch.dropout(t, 0.0, True)
        elif self.tail == "view":
            t.view(-1)
        elif self.tail == "dropout_read":
            return s + u + F.dropout(t, 0.1, training=False)
        elif self.tail == "kept":
            runtime.record_stream(t, "side")
        return s + u


RACES = {
    "nothing": True,
    "eval_dropout": True,
    "no_p_dropout": True,
    "view": True,
    "dropout_read": False,
    "kept": False,
}


@pytest.mark.parametrize("tail", RACES)
def test_a_dead_alias_keeps_nothing_alive(tail: str) -> None:
    problems = find_races(capture_graph(SideReadsThenMainAllocates(tail).eval(), torch.randn(2, 3)))
    assert bool(problems) is RACES[tail], problems
    assert all("tensor 't'" in p and "then dropped" in p for p in problems), problems
