"""The minimality proof on GE code (torchair's ops), and the GE hand version of a row's GE schedule.

Before ``bench.sync_ge_proof`` the proof read only npudsl's runtime ops, so on a GE graph (stand-in
torchair ops) it found no sync call at all: ``sync_generated --target ge`` said "0 droppable" of every row.
"""

from __future__ import annotations

import torch
from torch import nn

from bench import sync_generated
from bench.sync_count import count_graph, total
from bench.sync_ge_proof import capture_ge, ge_drops
from bench.sync_hand import keep_user_events, prove
from bench.sync_sources import Row


class _Tiny(nn.Module):
    """A fork, a side block, a second block continuing it, a wait for the main stream's own tensor, a user event."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        import torchair

        y = x * 2
        with torchair.scope.npu_stream_switch("side"):
            torchair.scope.npu_wait_tensor(x, y)
            a = x + 1
        with torchair.scope.npu_stream_switch("side"):
            b = a * 3
        torchair.ops.wait([y])
        done = torchair.ops.record()  # @records("ready")
        with torchair.scope.npu_stream_switch("other"):
            torchair.ops.wait([done])  # @after("ready")
            c = x - 1
        return y + b + c


def test_each_ge_call_is_dropped_alone_and_read_as_ge_orders_it() -> None:
    gm, out = capture_ge(_Tiny(), (torch.ones(4),))
    assert torch.equal(out, torch.full((4,), 2.0 + 6.0 + 0.0))
    found = keep_user_events(ge_drops(gm), ("ready",))
    assert [(d.call.split(" at ")[0], d.needed, d.why.split(":")[0]) for d in found] == [
        ("npu_stream_switch()", True, "its block overlaps the enclosing stream"),
        ("wait_tensor()", True, "the fork (CONTRACT section 2)"),
        ("npu_stream_switch()", False, "it continues the previous block of the same stream (merge them)"),
        ("wait()", False, "no race without it"),  # the main stream waiting for its own work
        ("record()", True, "a user event"),
        ("npu_stream_switch()", True, "its block overlaps the enclosing stream"),
        ("wait()", True, "a user event"),
    ]
    assert total(count_graph(gm)) == 7


def test_generated_ge_code_has_no_call_to_drop() -> None:
    """omni six streams on GE listed its second top-k gather's switch (on main: "0 droppable", read on no op) until
    ``hoist.py`` issued that gather in the first gather's block; omni_moe_prefetch's calls are each needed."""
    assert sync_generated.droppable(Row("omni_moe_prefetch", "corpus"), "ge") == []
    assert sync_generated.droppable(Row("omni_decode_six_streams", "corpus"), "ge") == []


def test_the_ge_hand_version_of_the_ge_schedule_counts_for_ge() -> None:
    """omni_moe_prefetch: GE runs the shared gate/up projection on the side stream (upstream's GE graph does);
    ``omni_moe_prefetch_ge.py`` writes that schedule with torchair's ops, 5 calls a layer, each needed."""
    proof = prove(Row("omni_moe_prefetch", "corpus"))
    assert proof is not None and proof.equal and proof.droppable == []
    assert proof.ge_calls == proof.counts["ge"] == 15
    assert proof.counts["portable"] == len(proof.drops) - proof.ge_calls == 27
