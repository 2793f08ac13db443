"""Progress on long runs: phases (indexing, transforming, checking) with an estimate of the time left."""

from __future__ import annotations

import io
from pathlib import Path

from cli_util import REPO
from codegen.driver.run import read_sources, run
from npudsl.cli.terminal import ProgressLine


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_estimate_of_the_time_left() -> None:
    out, clock = io.StringIO(), _Clock()
    line = ProgressLine(stream=out, clock=clock, delay=0.5)
    line("transforming", 1, 100)  # at once: a short run prints nothing
    assert out.getvalue() == ""
    clock.now += 10.0
    line("transforming", 50, 100)
    assert out.getvalue().endswith("npudsl: transforming 50/100 files, about 10 s left")
    clock.now += 100.0
    line("checking", 1, 4)
    clock.now += 80.0
    line("checking", 2, 4)
    assert out.getvalue().endswith("npudsl: checking 2/4 files, about 2 min 40 s left")
    assert "\rnpudsl: checking 1/4 files" + " " * 24 + "\r" in out.getvalue()  # padded over the longer line
    line.close()
    assert out.getvalue().endswith("\r" + " " * 49 + "\r") and "\033[" not in out.getvalue()


def test_a_run_reports_indexing_then_transforming(tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text((REPO / "examples" / "seed000.py").read_text(encoding="utf-8"))
    (tmp_path / "plain.py").write_text("x = 1\n")
    seen: list[tuple[str, int, int]] = []
    run(
        read_sources((str(p), str(tmp_path)) for p in sorted(tmp_path.iterdir())),
        target="aclgraph",
        jobs=1,
        progress=lambda *step: seen.append(step),
    )
    assert seen == [("indexing", 1, 3), ("indexing", 2, 3), ("indexing", 3, 3)] + [
        ("transforming", i, 4) for i in range(1, 5)
    ]
