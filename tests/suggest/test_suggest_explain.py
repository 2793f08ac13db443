"""``suggest --explain``: every call site considered, on stderr, with why it was or was not moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from npudsl.cli import main

pytest.importorskip("torch")

MODELS = Path(__file__).parent / "models"


def _explained(name: str, capsys, *options: str) -> list[str]:
    path = MODELS / name
    assert main(["suggest", str(path), "--diff", "--explain", *options]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"{path}: the call sites considered in {err[0].rsplit(' ', 1)[1]}" and len(err) >= 3
    return err[1:-1]


def test_a_moved_call_and_one_that_gains_nothing(capsys) -> None:
    assert _explained("moe_shared.py", capsys) == [
        "  moved SharedExpert.forward (line 34 of MoEBlock.forward, 1 call): moved to stream 'shared_expert': "
        "saves 0.02458 us for 2 syncs",
        "  kept  MoEBlock.routed (line 35 of MoEBlock.forward, 1 call): moving it gains nothing: what follows the "
        "call reads its result (a data dependency), no statement above it may be passed (a data dependency, or an "
        "effect the move would reorder), or what could run beside it already does",
    ]


def test_a_call_too_small_for_its_syncs(capsys) -> None:
    assert _explained("tiny_branch.py", capsys) == [
        "  kept  Model.flag (line 16 of Model.forward, 1 call): too small for its syncs: at best it saves 3.125e-06 "
        "us, its 2 syncs cost 0.002 us"
    ]


def test_a_call_nested_in_a_moved_one_and_a_call_moved_up(capsys) -> None:
    lines = _explained("late_shared.py", capsys)
    assert lines[0] == (
        "  kept  Layer.forward (line 45 of Model.forward, 2 calls): it is inside, or holds, "
        "SharedExpert.forward, already on stream 'shared' (streams do not nest)"
    )
    assert lines[2] == (
        "  moved SharedExpert.forward (line 33 of Layer.forward, 2 calls): moved to stream 'shared', "
        "its call moved up: saves 0.02458 us for 4 syncs"
    )


def test_a_call_that_needs_another_stream(capsys) -> None:
    lines = _explained("two_roles.py", capsys, "--sync-cost", "0")
    assert lines[0].startswith("  moved Branch.forward (line 23 of Model.forward, 1 call): moved to stream 'left'")
    assert lines[1].startswith("  kept  Branch.forward (line 24 of Model.forward, 1 call): ")
