"""The transform throughput bench runs end to end on a tiny corpus and prints its ratios."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import transform_throughput
from bench.corpus import generate
from codegen.run import read_sources, run


def test_tiny_run_prints_every_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert transform_throughput.main(["--files", "12", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    for line in ("ratio decorated transform/round-trip", "ratio undecorated round-trip/transform",
                 "ratio jobs=2 speed-up"):
        assert line in out


def test_corpus_transforms_without_diagnostics(tmp_path: Path) -> None:
    corpus = generate(str(tmp_path), files=12)
    results = run(read_sources((p, corpus.root) for p in corpus.all_files), target="portable", jobs=1)
    assert not [r.file.path for r in results if r.has_errors or r.diagnostics]
    changed = {r.file.path for r in results if r.changed}
    assert set(corpus.decorated) <= changed  # and, for each, the caller of its class in another file
    assert len(changed) == 2 * len(corpus.decorated)
