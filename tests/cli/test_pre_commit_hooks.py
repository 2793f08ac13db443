"""The hooks of .pre-commit-hooks.yaml, run by pre-commit itself on a small git repository.

pre-commit builds a ``language: python`` hook's environment by installing this repository with
pip, which needs the package index; so that these tests run offline, each hook is declared as a
``repo: local`` hook with exactly the fields of .pre-commit-hooks.yaml, except ``language: system``
(the entry then runs the ``npudsl`` of this interpreter, found first on PATH). What is tested is
ours: the entry, the arguments, ``pass_filenames``, ``types``; pre-commit decides what runs and
what fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_util import REPO

yaml = pytest.importorskip("yaml")
pytest.importorskip("pre_commit")
if shutil.which("git") is None:
    pytest.skip("git is not installed", allow_module_level=True)

EXAMPLE = REPO / "examples" / "moe_decoder.py"
_BIN = os.path.dirname(sys.executable)


def _hooks(args: dict[str, list[str]]) -> str:
    """A .pre-commit-config.yaml with our hooks as local system hooks, ``args`` by hook id."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    local = [
        {**hook, "language": "system", **({"args": args[hook["id"]]} if hook["id"] in args else {})} for hook in hooks
    ]
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]})


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _repo(tmp_path: Path, args: dict[str, list[str]]) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    shutil.copy(EXAMPLE, repo / "src" / "moe_decoder.py")
    (repo / ".pre-commit-config.yaml").write_text(_hooks(args))
    _git(repo, "init", "-q")
    return repo


def _run(repo: Path, hook: str) -> subprocess.CompletedProcess[str]:
    _git(repo, "add", "-A")
    env = {
        **os.environ,
        "PATH": _BIN + os.pathsep + os.environ.get("PATH", ""),
        "PRE_COMMIT_HOME": str(repo.parent / "cache"),
        "PYTHONPATH": str(REPO),
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--all-files", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_check_hook_passes_clean_code_and_fails_on_an_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {})
    assert _run(repo, "npudsl-check").returncode == 0
    model = repo / "src" / "moe_decoder.py"
    model.write_text(model.read_text().replace('when="self.multistream"', 'when="self.multistrem"', 1))
    failed = _run(repo, "npudsl-check")
    assert failed.returncode == 1
    assert 'NPD205 error: when="self.multistrem"' in failed.stdout
    assert 'did you mean "self.multistream"?' in failed.stdout


def test_transform_hook_compares_a_committed_generated_tree(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"npudsl-transform-check": ["src", "-o", "generated"]})
    missing = _run(repo, "npudsl-transform-check")
    assert missing.returncode == 1 and "missing: generated/moe_decoder.py" in missing.stdout
    subprocess.run(
        [sys.executable, "-m", "npudsl", "transform", "src", "-o", "generated"],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert _run(repo, "npudsl-transform-check").returncode == 0
    model = repo / "src" / "moe_decoder.py"
    model.write_text(model.read_text().replace('"shared"', '"expert"'))
    stale = _run(repo, "npudsl-transform-check")
    assert stale.returncode == 1 and "out of date: generated/moe_decoder.py" in stale.stdout


def test_transform_hook_on_sources_kept_transformed_in_place(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"npudsl-transform-check": ["src"]})
    annotated = _run(repo, "npudsl-transform-check")
    assert annotated.returncode == 1 and "would change: src/moe_decoder.py" in annotated.stdout
    subprocess.run(
        [sys.executable, "-m", "npudsl", "transform", "src", "--in-place"],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert _run(repo, "npudsl-transform-check").returncode == 0
