"""The transform throughput bench runs end to end on a tiny corpus and prints every figure of its table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import transform_stages, transform_throughput
from bench.corpus import generate
from codegen.driver.run import read_sources, run

REPO = Path(__file__).resolve().parents[2]


def test_tiny_run_prints_every_ratio_and_the_check_of_a_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert transform_throughput.main(["--files", "12", "--repeat", "1", "--check-tree", str(REPO / "examples")]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in out}
    for name in ("decorated", "plain"):
        files, lines, round_trip, transform, ratio = rows[name].split()[1:6]
        assert int(files) > 0 and int(lines) > 0 and float(round_trip) > 0 and float(ratio.rstrip("x")) > 0
    assert re.search(r"^check --jobs 1 on 5 files: [0-9.]+ CPU s = [0-9.]+ CPU s per 1,000 files", rows["check"])
    assert "jobs=1" in rows["whole"] and "jobs=2" in rows["whole"] and "default (1)" in rows["whole"]
    stages = dict(re.findall(r"(\w+) ([0-9.]+) \(\d+%\)", rows["stages"]))
    assert list(stages) == ["index", "collect", "validate", "lower", "rewrite", "other"]
    total = float(rows["stages"].rsplit("total ", 1)[1])
    assert float(stages["rewrite"]) > 0 and abs(sum(map(float, stages.values())) - total) < 0.01


def test_stage_seconds_add_up_to_the_run_and_leave_the_stages_unwrapped() -> None:
    files = transform_throughput.decorated_corpus()
    before = (transform_stages.api.lower, transform_stages.driver.run_index)
    spent = transform_stages.stage_seconds(lambda: run(files, target="aclgraph", jobs=1), 1)
    assert set(spent) == set(transform_stages.STAGES) and spent["index"] > 0 and spent["lower"] > 0
    assert (transform_stages.api.lower, transform_stages.driver.run_index) == before


def test_the_decorated_corpus_is_every_example_and_corpus_model_without_its_twin() -> None:
    files = transform_throughput.decorated_corpus()
    names = {Path(f.path).relative_to(REPO).as_posix() for f in files}
    assert "examples/seed000.py" in names and "tests/corpus/vllm_mla/layer.py" in names
    assert not [n for n in names if n.endswith("twin.py")]
    assert sum("npudsl" in (f.source or "") for f in files) >= 30


def test_corpus_transforms_without_diagnostics(tmp_path: Path) -> None:
    corpus = generate(str(tmp_path), files=12)
    results = run(read_sources((p, corpus.root) for p in corpus.all_files), target="portable", jobs=1)
    assert not [r.file.path for r in results if r.has_errors or r.diagnostics]
    changed = {r.file.path for r in results if r.changed}
    assert set(corpus.decorated) <= changed  # and, for each, the caller of its class in another file
    assert len(changed) == 2 * len(corpus.decorated)
