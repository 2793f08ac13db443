"""The premise of the sync benchmark: inputs made by a caller, not graph inputs.

The hand versions written for graph inputs skip the fork and the ``record_stream``
of the forward's arguments; the race checker must find each of them racy once a
caller makes those arguments right before the call and drops them after. That is
the proof that the premise matters, and that the calls added for it are needed.
"""

from __future__ import annotations

import copy
import inspect

import pytest
import torch
from torch import nn

from bench import sync_minimal
from bench.sync_hand import hand_module, prove
from bench.sync_premise import Caller, from_caller, premise, wrap
from bench.sync_proof import capture, drops
from bench.sync_rules import hand_counts
from bench.sync_sources import Row, rows
from npudsl import runtime
from npudsl.errors import StreamRaceError


def _premise_rows() -> list[Row]:
    """The rows whose hand version has calls only the caller premise needs."""
    return [
        row
        for row in rows()
        if (module := hand_module(row)) is not None and "from_caller()" in inspect.getsource(module)
    ]


PREMISE_ROWS = _premise_rows()


def test_the_caller_makes_every_tensor_it_passes() -> None:
    seen: list[object] = []

    class Spy(nn.Module):
        def forward(self, x, pair, table, flag):
            seen.extend([x, *pair, table["s"], flag])
            return x + pair[0]

    x, pair, table = torch.ones(2), (torch.zeros(2), torch.ones(2)), {"s": torch.ones(1)}
    out, after = Caller(Spy())(x, pair, table, 3)
    assert torch.equal(out, torch.ones(2)) and torch.equal(after, torch.zeros(1))
    assert all(made is not given for made, given in zip(seen[:4], [x, *pair, table["s"]], strict=True))
    given = [x, *pair, table["s"]]
    assert [torch.equal(made, value) for made, value in zip(seen[:4], given, strict=True)] == [True] * 4
    assert seen[4] == 3 and isinstance(wrap(Spy(), False), Spy)


def test_the_premise_is_restored() -> None:
    assert from_caller()
    with premise(False):
        assert not from_caller()
    assert from_caller()


def test_a_side_read_of_a_caller_made_input_needs_its_fork_and_record_stream() -> None:
    class Side(nn.Module):
        def forward(self, x):
            with runtime.stream("side"):
                y = x * 2
                runtime.record("join")
            w = (x + 1) * 3
            runtime.wait("join")
            return y + w

    capture(Side(), (torch.randn(4),))  # graph input: ready everywhere, alive throughout
    with pytest.raises(StreamRaceError, match="no wait in between"):
        capture(Caller(Side()), (torch.randn(4),))


def test_nine_hand_versions_depend_on_the_premise() -> None:
    assert [row.name for row in PREMISE_ROWS] == [
        "core_split",
        "seed000",
        "vllm_fused_moe",
        "vllm_mla",
        "cann_v32_indexer",
        "omni_decode_six_streams",
        "omni_config_streams",
        "sglang_many_callers",
        "ge_mla_waits",
    ]


@pytest.mark.parametrize("row", PREMISE_ROWS, ids=[row.name for row in PREMISE_ROWS])
def test_the_graph_input_hand_version_races_when_a_caller_makes_the_inputs(row: Row) -> None:
    model, inputs = row.reference()
    hand = hand_module(row).Hand(copy.deepcopy(model))
    with row.running(), torch.no_grad(), premise(False):
        capture(hand, inputs())  # as graph inputs: race-free
        with pytest.raises(StreamRaceError, match="made on stream 'default' at .*sync_premise.py"):
            capture(Caller(hand), inputs())


def test_core_split_under_both_premises(capsys: pytest.CaptureFixture[str]) -> None:
    caller, alone = prove(Row("core_split", "example")), prove(Row("core_split", "example", caller=False))
    assert caller is not None and alone is not None
    assert (caller.equal, caller.droppable, alone.equal, alone.droppable) == (True, [], True, [])
    assert [d.call for d in caller.drops] == [
        "event_record('fork')",
        "stream_enter('side', 0)",
        "event_wait('fork')",
        "record_stream(clone, 'side')",
        "event_record('side_done')",
        "event_wait('side_done')",
    ]
    assert len(alone.drops) == 3 and caller.counts["ge"] == 2 and alone.counts["ge"] == 1
    assert sync_minimal.main(["--only", "core_split", "--graph-inputs"]) == 0
    assert "6/3 2.00x" in capsys.readouterr().out
    assert sync_minimal.main(["--only", "core_split"]) == 0
    assert "6/6 1.00x" in capsys.readouterr().out


def test_a_native_join_at_the_return_makes_the_keep_alive_for_the_caller_unneeded() -> None:
    class Unjoined(nn.Module):
        def forward(self, x):
            runtime.record("fork")
            with runtime.stream("side"):
                runtime.wait("fork")
                runtime.record_stream(x, "side")  # the caller allocates while "side" may still read x
                z = x * 2
            return z

    gm, _ = capture(Caller(Unjoined()), (torch.randn(4),))
    assert [d.needed for d in drops(gm)] == [True] * 4
    assert hand_counts(gm, ()) == {"portable": 4, "aclgraph": 4, "ge": 2, "npugraph_ex": 5, "cuda": 5}
