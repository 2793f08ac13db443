"""The corpus through the transformer: every entry, every target, race-free under the checker and equal to its twin.

For each target, the CLI's run over the entry's files (all together, and each file alone) is imported
under the target's stand-ins and compiled whole with the race checker (``matrix.run_generated``); a
second transform of the output changes nothing; ``npudsl.compile`` of the entry's package alone (the
in-process path) is race-free and equal too. An entry that needs what npudsl does not do yet
(``NEEDS``) is skipped there, naming what npudsl said. Numerics are exact: outputs, inputs written in
place, state after the run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import npudsl
from codegen.driver.run import read_sources, run
from corpus.matrix import copied_package, generated_package, run_generated
from corpus.registry import ENTRIES, Entry
from corpus.test_corpus_eager import _assert_same
from npudsl.runtime import loader

TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")
NATIVE = ("cuda", "npugraph_ex")  # their streams are made at construction, or by a first eager call (as here)


def _needed(entry: Entry, step: Callable[..., Any], *args: Any, target: str = "portable", **kwargs: Any) -> Any:
    """``step(*args, **kwargs)``; skipped, with the reason, where npudsl falls short of a feature the entry needs."""
    try:
        return step(*args, **kwargs)
    except Exception as error:
        reason = entry.refusal(error, target)
        if reason is not None:
            pytest.skip(reason)
        raise


def _twin(entry: Entry) -> tuple[Any, tuple[Any, ...], Any]:
    """The twin's outputs, its inputs after the run, and the twin (with its state after the run)."""
    model = _needed(entry, entry.build)
    twin = entry.build_twin()
    twin.load_state_dict(model.state_dict())
    inputs = entry.inputs()[0]
    with torch.no_grad():
        out = twin(*inputs)
    return out, inputs, twin


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_generated_code_is_race_free_and_equal(entry: Entry, target: str, alone: bool, tmp_path: Path) -> None:
    package, codes = _needed(entry, generated_package, entry, target, tmp_path, alone=alone, target=target)
    want, want_inputs, _ = _twin(entry)
    seen: list[tuple[Any, ...]] = []

    def inputs() -> tuple[Any, ...]:
        seen.append(entry.inputs()[0])
        return seen[-1]

    got = _needed(entry, run_generated, package, tmp_path, target, inputs, eager_first=target in NATIVE,
                  target=target)
    _assert_same(got, want, f"{entry.name} on {target}")
    _assert_same(seen[-1], want_inputs, f"{entry.name} on {target}: inputs written in place")
    if not alone:
        again = read_sources((str(tmp_path / package / name), str(tmp_path / package)) for name in codes)
        assert not [r.file.path for r in run(again, target=target, jobs=1) if r.changed], "a second pass changed it"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_npudsl_compile_is_race_free_and_equal(entry: Entry, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(loader, "_CACHE", {})
    want, want_inputs, twin = _twin(entry)
    inputs = entry.inputs()[0]
    with copied_package(entry, tmp_path) as package, torch.no_grad():
        model = package.build()
        got = _needed(entry, lambda: npudsl.compile(model, fullgraph=True)(*inputs))
    _assert_same(got, want, f"{entry.name} compiled")
    _assert_same(inputs, want_inputs, f"{entry.name} compiled: inputs written in place")
    _assert_same(list(model.state_dict().values()), list(twin.state_dict().values()), f"{entry.name}: state")
