"""The sync benchmark: hand-written schedules proven minimal, the counts of each target, the table.

The proofs run under the default premise (inputs made by a caller,
``bench.sync_premise``; ``test_sync_premise.py`` covers the other). The ratios
generated/hand are printed, not asserted (the goal <= 1.00 waits for
the new synchronization planner, issue 26).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch import nn

from bench import sync_hand, sync_minimal
from bench.hand_written import core_split
from bench.sync_count import KINDS, count_graph, total
from bench.sync_hand import hand_module, prove
from bench.sync_premise import premise
from bench.sync_proof import capture, drops
from bench.sync_rules import hand_counts
from bench.sync_sources import TARGETS, Row, rows
from npudsl import runtime
from npudsl.errors import StreamRaceError

FAST = [
    ("seed000", "example"),
    ("core_split", "example"),
    ("distributed_overlap", "example"),
    ("vllm_native_shared_expert", "corpus"),
    ("same_stream_chain", "corpus"),
    ("vllm_fused_moe", "corpus"),
    ("sglang_glm4_share_stream", "corpus"),
    ("vllm_qwen3_dbo", "corpus"),
    ("sglang_dsa_alt_stream", "corpus"),
    ("vllm_dsv4_dsa_overlap", "corpus"),
    ("vllm_cp_chunked_prefill", "corpus"),
]


@pytest.mark.parametrize(("name", "kind"), FAST, ids=[name for name, _ in FAST])
def test_hand_version_is_race_free_equal_and_minimal(name: str, kind: str) -> None:
    proof = prove(Row(name, kind))
    assert proof is not None and proof.equal
    assert proof.drops and proof.droppable == []
    assert proof.counts["aclgraph"] == proof.counts["portable"] == len(proof.drops)


class _ExtraSync(nn.Module):
    """core_split by hand plus a fork the side branch does not need (it reads only the input)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = core_split.Hand(_core_split_model())

    def forward(self, x):
        runtime.record("fork")
        with runtime.stream("side"):
            runtime.wait("fork")
            runtime.record_stream(x, "side")
        return self.inner(x)


def _core_split_model() -> nn.Module:
    model, _ = Row("core_split", "example").reference()
    return model


def test_a_droppable_call_is_found_and_a_missing_one_races() -> None:
    with premise(False):  # x a graph input: core_split by hand needs no fork, the extra one is droppable
        gm, _ = capture(_ExtraSync(), (torch.randn(16, 64),))
    every = drops(gm)
    found = {d.call: d for d in every}
    assert not found["event_wait('fork')"].needed and not found["record_stream(l_x_, 'side')"].needed
    switches = [d.why for d in every if d.call == "stream_enter('side', 0)"]
    assert switches == ["its block does no work", "it continues the previous block of the same stream (merge them)"]
    join = found["event_wait('side_done')"]
    assert join.needed and "read on stream 'default'" in join.why

    class Missing(nn.Module):
        def forward(self, x):
            with runtime.stream("side"):
                y = x * 2
            return y + 1

    with pytest.raises(StreamRaceError):
        capture(Missing(), (torch.randn(4),))


def test_rules_per_target() -> None:
    class Unjoined(nn.Module):
        def forward(self, x):
            y = x + 1
            runtime.record("fork")
            with runtime.stream("side"):
                runtime.wait("fork")
                z = y * 2
            return y, z

    gm, _ = capture(Unjoined(), (torch.randn(4),))
    assert total(count_graph(gm)) == 3
    assert hand_counts(gm, ()) == {"portable": 3, "aclgraph": 3, "ge": 2, "npugraph_ex": 5, "cuda": 5}
    assert hand_counts(gm, ("fork",))["ge"] == 2  # a user event: one edge, not also a fork point


def test_a_user_event_of_each_layer_is_an_edge_of_its_own() -> None:
    """GE: one edge per record that a stream waits for, however many wait; a layer's is not the next layer's."""

    class Layers(nn.Module):
        def forward(self, x):
            for _ in range(2):
                runtime.record("ready")
                with runtime.stream("side"):
                    runtime.wait("ready")
                    x = x * 2
                    runtime.record("done")
                with runtime.stream("other"):
                    runtime.wait("done")
                runtime.wait("done")
                x = x + 1
            return x

    gm, _ = capture(Layers(), (torch.randn(4),))
    assert hand_counts(gm, ("ready", "done"))["ge"] == 4 + 4  # four switches; two events in each of two layers


def test_a_block_that_waits_for_nothing_belongs_in_the_earlier_block() -> None:
    class Split(nn.Module):
        def forward(self, x):
            with runtime.stream("side"):
                a = x * 2
                runtime.record("a_done")
            b = x + 1
            with runtime.stream("side"):
                c = x * 3
                runtime.record("join")
            runtime.wait("a_done")
            runtime.wait("join")
            return a + b + c

    whys = [d.why for d in drops(capture(Split(), (torch.randn(4),))[0]) if d.call.startswith("stream_enter")]
    assert whys == [
        "its block overlaps the enclosing stream",
        "it waits for nothing: its work can go into the earlier block of its stream",
    ]


def test_a_fork_under_a_core_limit_is_one_ge_edge() -> None:
    class Limited(nn.Module):
        def forward(self, x):
            y = x + 1
            runtime.record("fork")
            with runtime.stream("side"), runtime.core_limit(8, 16):
                runtime.wait("fork")
                z = y * 2
                runtime.record("join")
            runtime.wait("join")
            return z + y

    gm, _ = capture(Limited(), (torch.randn(4),))
    assert hand_counts(gm, ()) == {"portable": 5, "aclgraph": 5, "ge": 2, "npugraph_ex": 5, "cuda": 5}


def test_every_hand_version_names_its_row() -> None:
    names = {row.name for row in rows()}
    for row in rows():
        module = hand_module(row)
        if module is not None:
            assert module.SOURCE == f"{row.kind}:{row.name}"
    assert {"seed000", "core_split", "moe_decoder", "distributed_overlap"} <= names


def test_a_hand_version_that_races_is_reported_in_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    class Racing(nn.Module):
        def __init__(self, model: nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, x):
            with runtime.stream("side"):
                side = torch.relu(self.model.side_proj(x))
            return torch.tanh(self.model.main_proj(x)) + side  # read with no wait

    monkeypatch.setattr(sync_hand, "hand_module", lambda row: SimpleNamespace(Hand=Racing, USER_EVENTS=()))
    result = sync_minimal.measure(Row("core_split", "example"))
    assert not result["hand"]["equal"] and result["hand"]["droppable"][0].startswith("the hand version races: tensor")
    assert "hand" not in result["targets"]["portable"] and isinstance(result["targets"]["portable"]["generated"], int)


def test_table_builds_and_prints_the_ratios(capsys: pytest.CaptureFixture[str]) -> None:
    results = [sync_minimal.measure(Row("seed000", "example"))]
    cells = results[0]["targets"]
    assert set(cells) == set(TARGETS)
    assert all(isinstance(c["generated"], int) and c["hand"] > 0 for c in cells.values())
    assert set(KINDS) == {"switch", "record", "wait", "record_stream"}
    text = sync_minimal.table(results)
    print(text)
    assert text.splitlines()[1].startswith("seed000") and "yes, yes" in text
    rows = sync_minimal.markdown(results).splitlines()
    assert rows[0].startswith("| example / entry | portable |") and rows[2].startswith("| `seed000` | ")
    assert sync_minimal.main(["--only", "core_split"]) == 0
    assert "core_split" in capsys.readouterr().out
