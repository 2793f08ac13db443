"""What the index build reads of a run's modules, the lowering does not read again (``per_index.per_run``).

The index build searches each module's calls against a partial index (its stream functions settled, no calls
yet); the lowering reads the final one, the same with its calls added. A module's functions and what they write
(``imported_writes.ModuleFunctions``, its kept readings) are the same of both, so the run makes them once.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from codegen.driver.run import read_sources, run
from codegen.index.index import build_index
from codegen.index.per_index import per_index, per_run
from codegen.lower.flow import imported_writes
from frontend_util import CALLER, LAYERS

_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_per_run_answers_once_for_both_indexes_of_a_run() -> None:
    asked: list[object] = []

    @per_run
    def callees(index: object) -> list[str]:
        asked.append(index)
        return sorted(index.callees)  # type: ignore[attr-defined]

    final = build_index([("layers", LAYERS), ("model", CALLER)])
    partial = attrs.evolve(final, calls={}, stream_calls={})  # as the call search read it
    assert callees(partial) is callees(final)
    other = build_index([("layers", LAYERS), ("model", CALLER)])
    assert callees(other) == sorted(final.callees)
    assert len(asked) == 2 and asked[0] is partial and asked[1] is other


def test_per_index_still_answers_again_for_the_final_index() -> None:
    @per_index
    def calls(index: object) -> int:
        return len(index.calls)  # type: ignore[attr-defined]

    final = build_index([("layers", LAYERS), ("model", CALLER)])
    assert calls(attrs.evolve(final, calls={})) == 0 and calls(final) == 1  # an answer that reads the calls


def test_each_module_read_for_its_functions_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = imported_writes.ModuleFunctions.__init__

    def counted(self: imported_writes.ModuleFunctions, index: object, key: str, tree: object) -> None:
        made.append(key)
        real(self, index, key, tree)  # type: ignore[arg-type]

    monkeypatch.setattr(imported_writes.ModuleFunctions, "__init__", counted)
    examples = [(str(_EXAMPLES / name), str(_EXAMPLES)) for name in ("core_split.py", "moe_decoder.py")]
    results = run(read_sources(examples), target="aclgraph", jobs=1)
    assert all(r.changed and not r.has_errors for r in results)
    assert sorted(made) == ["core_split", "moe_decoder"]  # by the index build, and not again by the lowering
