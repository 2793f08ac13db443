"""What every applied suggestion must satisfy, shared by the suggest tests: it applies with ``git apply``, checks
clean, compiles race-free with the original model's numbers, and ``schedule`` predicts the promised saving."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import torch

import npudsl
from npudsl.cli import main
from npudsl.cli.diffs import unified_diff
from npudsl.suggest import Suggestion, suggest
from npudsl.timeline import picture
from npudsl.timeline.capture import load_example, pick_model

__all__ = ["apply_suggestion", "assert_checks_clean", "assert_promised", "assert_same_numbers"]


def apply_suggestion(path: Path, **options: object) -> Suggestion:
    """``suggest`` on ``path``, its diff applied to the file by ``git apply``."""
    suggestion = suggest(str(path), **options)  # type: ignore[arg-type]
    patch = unified_diff(suggestion.source, suggestion.proposed, path.name)
    if patch:  # a suggestion may find nothing to move: nothing to apply
        subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=path.parent, check=True)
    assert path.read_text() == suggestion.proposed
    return suggestion


def assert_checks_clean(path: Path) -> None:
    assert main(["check", str(path)]) == 0


def assert_promised(suggestion: Suggestion, path: Path) -> None:
    drawn = picture(str(path)).schedule
    assert drawn.saving > 0.05
    assert drawn.saving == pytest.approx(suggestion.plan.schedule.saving, abs=1e-9)
    assert drawn.serial == pytest.approx(suggestion.plan.before.serial, abs=1e-9)


def assert_same_numbers(original: Path, changed: Path) -> None:
    """The changed model, compiled for ``portable`` (which raises on a race), computes the original's outputs."""
    before, after = load_example(str(original)), load_example(str(changed))
    inputs = before.example_inputs()
    torch.manual_seed(0)
    expected = pick_model(before)(*inputs)
    torch.manual_seed(0)
    model = pick_model(after)
    torch._dynamo.reset()
    actual = npudsl.compile(model, target="portable", fullgraph=True)(*inputs)
    pairs = [(actual, expected)] if isinstance(expected, torch.Tensor) else list(zip(actual, expected, strict=True))
    assert all(torch.equal(got, want) for got, want in pairs)
