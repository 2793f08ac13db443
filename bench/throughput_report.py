"""The printed table of ``bench/transform_throughput.py``: CPU seconds and ratios against their goals, the check of
a real tree, the jobs, and where the decorated run's time goes.
"""

from __future__ import annotations

import os

from bench.transform_stages import STAGES

__all__ = ["GOALS", "Figures", "report"]

GOALS = {"decorated": 1.5, "plain": 40.0, "check_per_1000": 1.0}  # docs/performance.md section 1

Figures = dict[str, float]


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _row(name: str, f: Figures) -> str:
    ratio = f[f"rt_{name}"] / f[f"tf_{name}"]
    return (
        f"{name:<10} {f[f'{name}_files']:>6.0f} {f[f'{name}_lines']:>7.0f} {f[f'rt_{name}']:>13.3f} "
        f"{f[f'tf_{name}']:>13.4f} {ratio:>8.2f}x  >= {GOALS[name]}x: {_verdict(ratio >= GOALS[name])}"
    )


def report(f: Figures) -> list[str]:
    """The printed table: CPU seconds and ratios, the check of a real tree, the jobs."""
    lines = [
        f"{'corpus':<10} {'files':>6} {'lines':>7} {'round trip s':>13} {'transform s':>13} {'ratio':>9}  goal",
        _row("decorated", f),
        _row("plain", f),
    ]
    if f["check_files"]:
        per = f["check"] / f["check_files"] * 1000
        lines.append(
            f"check --jobs 1 on {f['check_files']:.0f} files: {f['check']:.2f} CPU s = {per:.2f} CPU s "
            f"per 1,000 files  <= {GOALS['check_per_1000']}: {_verdict(per <= GOALS['check_per_1000'])}"
        )
    jobs = "; ".join(
        f"{label} {f[f'{key}_wall']:.3f} s wall, {f[f'{key}_cpu']:.3f} CPU s"
        for label, key in (("jobs=1", "jobs1"), ("jobs=2", "jobs2"), (f"default ({f['auto_jobs']:.0f})", "jobs_auto"))
    )
    lines.append(f"whole generated corpus ({f['all_files']:.0f} files, {os.cpu_count()} CPUs): {jobs}")
    total = sum(f[f"stage_{name}"] for name in STAGES)
    split = ", ".join(f"{name} {f[f'stage_{name}']:.3f} ({f[f'stage_{name}'] / total:.0%})" for name in STAGES)
    lines.append(f"stages of the decorated run, CPU s: {split}; total {total:.3f}")
    return lines
