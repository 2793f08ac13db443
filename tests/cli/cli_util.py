"""Run ``npudsl`` in a fresh interpreter, as a user's shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["REPO", "npudsl", "python"]

REPO = Path(__file__).resolve().parents[2]


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = str(REPO)
    return {**env, **(extra or {})}


def python(
    *args: str,
    cwd: Path | str | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(env),
        timeout=timeout,
        check=False,
    )


def npudsl(
    *args: str,
    cwd: Path | str | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``python -m npudsl ARGS`` (standard input closed unless given)."""
    return python("-m", "npudsl", *args, cwd=cwd, stdin=stdin if stdin is not None else "", env=env, timeout=timeout)
