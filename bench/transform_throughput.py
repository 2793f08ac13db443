"""Transform throughput against a bare libcst round trip, on a generated corpus.

    python3 bench/transform_throughput.py [--files 400] [--repeat 3] [--target aclgraph] [--decorated-blocks 8]

Measures, on the same in-memory sources (reading files is not timed):
(a) ``libcst.parse_module(src).code`` for every file, (b) ``codegen.run.run`` with
jobs=1 on the decorated files only, (c) the same on the undecorated files only,
(d) the whole corpus with jobs=1 and jobs=2. Prints throughputs and ratios.
(a) to (c) count this process's CPU time (robust on a shared machine); (d) counts wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as `python3 bench/<name>.py`

import libcst  # noqa: E402

from bench.corpus import generate  # noqa: E402
from bench.timing import best_of  # noqa: E402
from codegen.rewrite.build import parse_statement  # noqa: E402
from codegen.run import SourceFile, read_sources, run  # noqa: E402

__all__ = ["Figures", "main", "measure"]

DECORATED_TARGET = 0.8  # transform throughput >= 0.8 x round trip, on decorated files
UNDECORATED_TARGET = 20.0  # transform >= 20x faster than the round trip, on undecorated files

Figures = dict[str, float]


def _round_trip(files: list[SourceFile]) -> None:
    for file in files:
        assert file.source is not None
        _ = libcst.parse_module(file.source).code  # rendered, as the transform renders its output


def _transform(files: list[SourceFile], target: str, jobs: int) -> None:
    parse_statement.cache_clear()  # every timing starts cold, as one `npudsl transform` process does
    results = run(files, target=target, jobs=jobs)
    failed = [r.file.path for r in results if r.has_errors]
    if failed:
        raise SystemExit(f"transform failed on {failed[:3]}")


def _lines(files: list[SourceFile]) -> int:
    return sum((f.source or "").count("\n") for f in files)


def measure(root: str, *, files: int, repeat: int, target: str, **shape: int) -> Figures:
    """Generate the corpus under ``root`` and time every configuration (seconds, best of ``repeat``).

    The configurations take turns within each repeat, so a burst of load elsewhere on the
    machine hits all of them alike instead of one.
    """
    corpus = generate(root, files=files, **shape)
    decorated = read_sources((p, corpus.root) for p in corpus.decorated)
    undecorated = read_sources((p, corpus.root) for p in corpus.undecorated)
    everything = decorated + undecorated
    runs: dict[str, Callable[[], None]] = {
        "rt_decorated": lambda: _round_trip(decorated),
        "tf_decorated": lambda: _transform(decorated, target, 1),
        "rt_undecorated": lambda: _round_trip(undecorated),
        "tf_undecorated": lambda: _transform(undecorated, target, 1),
        "tf_all_jobs1": lambda: _transform(everything, target, 1),
        "tf_all_jobs2": lambda: _transform(everything, target, 2),
    }
    best = {name: float("inf") for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            clock = time.perf_counter if name.endswith("jobs2") or name.endswith("jobs1") else time.process_time
            best[name] = min(best[name], best_of(fn, 1, clock))
    return {"files": len(everything), "lines": _lines(everything), "decorated_files": len(decorated),
            "decorated_lines": _lines(decorated), **best}


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def report(f: Figures) -> list[str]:
    """The printed summary: throughputs, then the ratios checked against the targets."""
    kloc = f["decorated_lines"] / 1000
    dec_ratio = f["rt_decorated"] / f["tf_decorated"]
    undec_speedup = f["rt_undecorated"] / f["tf_undecorated"]
    return [
        f"corpus: {f['files']:.0f} files, {f['lines']:.0f} lines; "
        f"decorated: {f['decorated_files']:.0f} files, {f['decorated_lines']:.0f} lines",
        f"(a) libcst round trip, decorated files:   {f['rt_decorated']:.3f} s ({kloc / f['rt_decorated']:.1f} kloc/s)",
        f"(b) transform jobs=1, decorated files:    {f['tf_decorated']:.3f} s ({kloc / f['tf_decorated']:.1f} kloc/s)",
        f"    libcst round trip, undecorated files: {f['rt_undecorated']:.3f} s",
        f"(c) transform jobs=1, undecorated files:  {f['tf_undecorated']:.4f} s",
        f"(d) transform all files, jobs=1: {f['tf_all_jobs1']:.3f} s; jobs=2: {f['tf_all_jobs2']:.3f} s",
        f"ratio decorated transform/round-trip throughput: {dec_ratio:.2f}x "
        f"(target >= {DECORATED_TARGET}x: {_verdict(dec_ratio >= DECORATED_TARGET)})",
        f"ratio undecorated round-trip/transform time: {undec_speedup:.1f}x "
        f"(target >= {UNDECORATED_TARGET:.0f}x: {_verdict(undec_speedup >= UNDECORATED_TARGET)})",
        f"ratio jobs=2 speed-up over jobs=1: {f['tf_all_jobs1'] / f['tf_all_jobs2']:.2f}x "
        f"({os.cpu_count()} cores)",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=400, help="corpus size (a tenth decorated)")
    parser.add_argument("--repeat", type=int, default=3, help="timings per configuration; the best is kept")
    parser.add_argument("--target", default="aclgraph")
    parser.add_argument("--decorated-blocks", type=int, default=8,
                        help="plain blocks beside the decorated one in a decorated file (fewer: denser decorators)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="npudsl-bench-") as root:
        figures = measure(root, files=args.files, repeat=args.repeat, target=args.target,
                          decorated_blocks=args.decorated_blocks)
    print("\n".join(report(figures)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
