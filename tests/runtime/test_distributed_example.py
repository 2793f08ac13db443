"""The distributed overlap example runs untransformed on CPU (gloo, two processes) and checks itself."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_distributed_overlap_example_matches_single_stream() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", "distributed_overlap.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("matches the single-stream result") == 2
