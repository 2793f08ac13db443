"""Transform throughput against a bare libcst round trip, in CPU seconds, side by side in one run.

    python3 bench/transform_throughput.py [--repeat 5] [--files 200] [--target aclgraph] [--check-tree PATH]

CPU seconds, not wall time: a shared machine swings the wall clock far more. Both sides of a
ratio get the same in-memory sources (reading is not timed) and take turns within each repeat;
the best of the repeats is kept.

- decorated: ``examples/`` and the models of ``tests/corpus`` (each entry but its undecorated
  twin), as one run: ``codegen.driver.run.run(files, jobs=1)`` against ``libcst.parse_module(src).code``;
- plain: the undecorated files of a generated corpus (``bench/corpus.py``), the same two;
- check: ``npudsl check TREE --jobs 1`` in its own process (start-up and reading included), in
  CPU seconds per 1,000 files; TREE is the installed ``transformers`` package unless given;
- jobs: the whole generated corpus with jobs=1, jobs=2 and the default picked from the work,
  wall clock and CPU (workers included);
- stages: where the decorated run's CPU time goes (``bench/transform_stages.py``), from the
  fastest of as many runs again, timed apart from the ratio (the wrappers cost a little).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as `python3 bench/<name>.py`

import libcst  # noqa: E402

from bench.corpus import generate  # noqa: E402
from bench.throughput_report import GOALS, Figures, report  # noqa: E402
from bench.timing import best_in_turns  # noqa: E402
from bench.transform_stages import stage_seconds  # noqa: E402
from codegen.driver import pyast  # noqa: E402
from codegen.driver.run import SourceFile, discover, read_sources, run, run_index  # noqa: E402
from codegen.driver.triage import needs_analysis  # noqa: E402
from codegen.driver.workers import auto_jobs  # noqa: E402
from codegen.rewrite.build import clear_caches  # noqa: E402

__all__ = ["GOALS", "decorated_corpus", "main", "measure", "report"]


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (pool workers, subprocesses)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(fn: Callable[[], object], clock: Callable[[], float] = _cpu) -> Callable[[], float]:
    def measure() -> float:
        start = clock()
        fn()
        return clock() - start

    return measure


def _round_trip(files: list[SourceFile]) -> None:
    for file in files:
        _ = libcst.parse_module(file.source or "").code  # rendered, as the transform renders its output


def _transform(files: list[SourceFile], target: str, jobs: int | None) -> None:
    clear_caches()  # every timing starts cold, as one `npudsl transform` process does
    failed = [r.file.path for r in run(files, target=target, jobs=jobs) if r.has_errors]
    if failed:
        raise SystemExit(f"transform failed on {failed[:3]}")


def decorated_corpus() -> list[SourceFile]:
    """``examples/`` and every ``tests/corpus`` entry without its twin, read as one run."""
    entries = sorted(str(p) for p in (REPO / "tests" / "corpus").iterdir() if (p / "__init__.py").is_file())
    found = [
        (path, root)
        for path, root in discover([str(REPO / "examples"), *entries])
        if os.path.basename(path) != "twin.py"
    ]
    return read_sources(found)


def _lines(files: list[SourceFile]) -> int:
    return sum((f.source or "").count("\n") for f in files)


def _check_tree(tree: str) -> float:
    """CPU seconds of ``npudsl check TREE --jobs 1`` in a fresh process."""
    before = _cpu()
    subprocess.run(
        [sys.executable, "-m", "npudsl", "check", tree, "--jobs", "1"],
        cwd=REPO,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    return _cpu() - before


def _analyzed_characters(files: list[SourceFile]) -> int:
    """The work the default ``--jobs`` is picked from: the characters of the files a run analyzes."""
    with pyast.shared_trees():
        index = run_index(files)
        return sum(len(f.source or "") for f in files if f.source and needs_analysis(f.source, f.module, index))


def measure(root: str, *, files: int, repeat: int, target: str, check_tree: str | None) -> Figures:
    """Every figure of the report (seconds, best of ``repeat``; the measures take turns in each repeat)."""
    corpus = generate(root, files=files)
    decorated, plain = decorated_corpus(), read_sources((p, corpus.root) for p in corpus.undecorated)
    everything = read_sources((p, corpus.root) for p in corpus.all_files)
    work = _analyzed_characters(everything)
    measures = {
        "rt_decorated": _timed(lambda: _round_trip(decorated)),
        "tf_decorated": _timed(lambda: _transform(decorated, target, 1)),
        "rt_plain": _timed(lambda: _round_trip(plain)),
        "tf_plain": _timed(lambda: _transform(plain, target, 1)),
    }
    for name, jobs in (("jobs1", 1), ("jobs2", 2), ("jobs_auto", None)):
        measures[f"{name}_cpu"] = _timed(lambda jobs=jobs: _transform(everything, target, jobs))
        measures[f"{name}_wall"] = _timed(lambda jobs=jobs: _transform(everything, target, jobs), time.perf_counter)
    if check_tree:
        measures["check"] = lambda: _check_tree(check_tree)
    found = best_in_turns(measures, repeat)
    stages = stage_seconds(lambda: _transform(decorated, target, 1), repeat)
    return {
        **found,
        **{f"stage_{name}": seconds for name, seconds in stages.items()},
        "decorated_files": len(decorated),
        "decorated_lines": _lines(decorated),
        "plain_files": len(plain),
        "plain_lines": _lines(plain),
        "all_files": len(everything),
        "auto_jobs": auto_jobs(work),
        "check_files": sum(1 for _ in discover([check_tree])) if check_tree else 0,
    }


def _installed_transformers() -> str | None:
    spec = importlib.util.find_spec("transformers")
    return os.path.dirname(spec.origin) if spec is not None and spec.origin else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=200, help="generated corpus size (a tenth decorated)")
    parser.add_argument("--repeat", type=int, default=3, help="timings per measure; the best is kept")
    parser.add_argument("--target", default="aclgraph")
    parser.add_argument(
        "--check-tree",
        default=_installed_transformers(),
        metavar="PATH",
        help="the tree `npudsl check` runs on (default: the installed transformers; '' skips)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="npudsl-bench-") as root:
        figures = measure(
            root, files=args.files, repeat=args.repeat, target=args.target, check_tree=args.check_tree or None
        )
    print("\n".join(report(figures)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
