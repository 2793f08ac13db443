"""The minimality proof run on the generated code names the calls a row has beyond its hand version."""

from __future__ import annotations

import pytest

from bench import sync_generated
from bench.sync_sources import Row


def test_the_extra_record_stream_of_the_native_shared_expert_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """The shared expert's last statement reads the layer input on its stream and returns: what orders the
    input's reuse is the routed path's wait for "moe:shared_done", in another class (the planner keeps it)."""
    found = sync_generated.droppable(Row("vllm_native_shared_expert", "corpus"))
    assert [(d.call, d.why) for d in found] == [
        ("record_stream(clone, 'shared_experts_calculation')", "no race without it")
    ]
    assert sync_generated.main(["core_split", "seed000", "distributed_overlap", "cann_v32_indexer"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "core_split (portable): 0 droppable",
        "distributed_overlap (portable): 0 droppable",  # all_reduce's argument is read after the wait
        "seed000 (portable): 0 droppable",
        "cann_v32_indexer (portable): 0 droppable",  # "22" issues nothing before "33" is joined
    ]


def test_user_events_of_the_generated_code_stay() -> None:
    found = [d.call for d in sync_generated.droppable(Row("seed000", "example", caller=False))]
    assert found == [
        "record_stream(l_in3_, '1')",
        "record_stream(l_in4_, '1')",
        "record_stream(l_in3_, '2')",
        "record_stream(l_in4_, '2')",
    ]  # graph inputs; the user's events add_done and mm_done stay
