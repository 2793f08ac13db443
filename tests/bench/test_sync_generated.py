"""The minimality proof run on the generated code names the calls a row has beyond its hand version."""

from __future__ import annotations

import pytest

from bench import sync_generated
from bench.sync_sources import Row


def test_the_extra_record_stream_of_distributed_overlap_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    found = sync_generated.droppable(Row("distributed_overlap", "example"))
    assert [(d.call, d.why) for d in found] == [("record_stream(out, 'comm')", "no race without it")]
    assert sync_generated.main(["core_split", "seed000"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "core_split (portable): 0 droppable",
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
