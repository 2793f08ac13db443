"""The minimality proof run on the generated code names the calls a row has beyond its hand version."""

from __future__ import annotations

import pytest

from bench import sync_generated
from bench.sync_sources import Row


def test_the_extra_record_stream_of_the_indexer_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """``q_scale`` is made on "22", which issues nothing after that block: its record_stream for "33" is extra
    (the planner keeps it: it cannot see that nothing run later issues work on "22")."""
    found = sync_generated.droppable(Row("cann_v32_indexer", "corpus"))
    assert [(d.call, d.why) for d in found] == [("record_stream(scale, '33')", "no race without it")]
    assert sync_generated.main(["core_split", "seed000", "distributed_overlap"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "core_split (portable): 0 droppable",
        "distributed_overlap (portable): 0 droppable",  # all_reduce's argument is read after the wait
        "seed000 (portable): 0 droppable",
    ]


def test_user_events_of_the_generated_code_stay() -> None:
    found = [d.call for d in sync_generated.droppable(Row("seed000", "example", caller=False))]
    assert found == [
        "record_stream(l_in3_, '1')",
        "record_stream(l_in4_, '1')",
        "record_stream(l_in3_, '2')",
        "record_stream(l_in4_, '2')",
    ]  # graph inputs; the user's events add_done and mm_done stay
