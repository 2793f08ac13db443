"""A call whose own ``@after`` event was recorded on the caller's stream just before it needs no fork of its own.

Found porting omni-infer's MoE decode (``corpus.omni_moe_prefetch``): the shared expert's activation waits for the
user's ``dispatched``, recorded as the dispatch (the statement before it) ends, and reads the gate/up projection
the main stream made before; the generated code also recorded and waited for a fork event at that same point
(two events at one point, CONTRACT section 2). ``codegen/lower/flow/event_fork.py`` drops that fork:

- ``after_record``: ``stage`` records ``staged``, the next statement calls ``side`` (``@after("staged")``) with
  names only: no fork record, no fork wait;
- ``work_between``: a main-stream op stands between the record and the call, and the call reads its result: the
  fork stays (without it the side stream would read ``t`` before it is made);
- ``computed_argument``: the argument is computed at the call, after the record: the fork stays;
- ``guarded_record``: ``stage_maybe`` records its event only under ``when=`` (and ``side_maybe`` waits for it
  under the same): the fork stays.

Every case runs under the race checker, called with inputs its caller made right before, on both guard values,
and equals the same arithmetic on one stream.
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
from npudsl import after, on_stream, records


class Model(nn.Module):
    def __init__(self, on=True):
        super().__init__()
        self.on = on

    @records("staged")
    def stage(self, x):
        return x * 3, x + 1

    @records("maybe", when="self.on")
    def stage_maybe(self, x):
        return x * 3, x + 1

    @on_stream("side", when="self.on")
    @after("staged")
    def side(self, q):
        return q * 2

    @on_stream("side", when="self.on")
    @after("maybe", when="self.on")
    def side_maybe(self, q):
        return q * 2

    def after_record(self, x):
        q = x * 5
        a, b = self.stage(x)
        o = self.side(q)
        y = a * b
        return o + y

    def work_between(self, x):
        a, b = self.stage(x)
        t = x * 5
        o = self.side(t)
        y = a * b
        return o + y

    def computed_argument(self, x):
        a, b = self.stage(x)
        o = self.side(x * 5)
        y = a * b
        return o + y

    def guarded_record(self, x):
        q = x * 5
        a, b = self.stage_maybe(x)
        o = self.side_maybe(q)
        y = a * b
        return o + y
""" + caller_source()

FORKS = {"after_record": None, "work_between": "side", "computed_argument": "side", "guarded_record": "side_maybe"}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", sorted(FORKS))
def test_a_fork_only_where_the_users_event_does_not_order_the_call(method: str) -> None:
    body = _body(method)
    forked = FORKS[method]
    if forked is None:
        assert ".fork" not in body, body
        assert "runtime.stream(" in body, body  # the call still runs on its stream
    else:
        assert body.count(f'runtime.record("m.Model.{forked}.fork")') == 1, body
        assert body.count(f'runtime.wait("m.Model.{forked}.fork")') == 1, body


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("method", sorted(FORKS))
def test_race_free_and_exact(method: str, on: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    got = run_checked(code, "portable", lambda m: m.Caller(method, on), (x,))  # type: ignore[attr-defined]
    torch.testing.assert_close(got, x * 5 * 2 + (x * 3) * (x + 1))
