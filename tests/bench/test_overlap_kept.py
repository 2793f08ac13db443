"""The overlap benchmark's pairs: same numbers, no race, and the automatic sync keeps the hand-placed saving."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.overlap_kept import GOAL, PAIRS_FILE, compare
from npudsl.timeline import picture
from npudsl.timeline.capture import load_example

PAIRS = list(load_example(PAIRS_FILE).PAIRS)
INDEXER_FILE = str(Path(PAIRS_FILE).with_name("pairs_cann_recipes.py"))  # the pair indexer_two_streams


@pytest.mark.parametrize("name", PAIRS)
def test_automatic_sync_keeps_the_hand_placed_saving(name: str) -> None:
    auto, hand, equal = compare(name)
    assert equal, "the automatic and the hand-placed model compute different numbers"
    assert hand > 0.1, "the pair overlaps too little to measure anything"
    assert auto >= GOAL * hand


def test_a_join_waits_for_its_whole_statement(tmp_path: Path) -> None:
    """Joins are placed per statement: one expression reading two side-stream results waits for both
    before it starts (the limit docs/performance.md states); splitting it recovers the overlap."""
    split = "        score = (q * k).sum(-1)\n        return score + weights.sum(-1)\n"
    source = Path(INDEXER_FILE).read_text(encoding="utf-8")
    assert split in source
    joined = tmp_path / "one_expression.py"
    joined.write_text(source.replace(split, "        return (q * k).sum(-1) + weights.sum(-1)\n", 1), encoding="utf-8")
    whole = picture(str(joined), model="IndexerAuto", inputs="indexer_inputs").schedule.saving
    parts = picture(INDEXER_FILE, model="IndexerAuto", inputs="indexer_inputs").schedule.saving
    assert whole < 0.75 * parts
