"""``transform --diff`` is a patch that real ``git apply`` accepts, and applying it gives what ``-o`` writes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cli_util import REPO, npudsl
from npudsl.cli.diffs import unified_diff

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
SEED = (REPO / "examples" / "seed000.py").read_text(encoding="utf-8")


def _git(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "model.py").write_text(SEED, encoding="utf-8")
    (tmp_path / "src" / "tail.py").write_text(SEED.rstrip("\n"), encoding="utf-8")  # no final newline
    (tmp_path / "src" / "page.py").write_text(
        SEED.replace("import torch\n", "import torch\n\x0c\n", 1), encoding="utf-8"
    )  # a form feed: a line break for str.splitlines
    assert _git(tmp_path, "init", "-q").returncode == 0
    return tmp_path


def _applies(repo: Path, *paths: str) -> str:
    result = npudsl("transform", *paths, "--diff", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("--- a/src/")
    check = _git(repo, "apply", "--check", "-", stdin=result.stdout)
    assert check.returncode == 0, check.stderr
    return result.stdout


@pytest.mark.parametrize("spelling", ["src", "./src", "src/", "ABSOLUTE"])
def test_git_apply_accepts_the_diff_of_every_path_spelling(repo: Path, spelling: str) -> None:
    patch = _applies(repo, str(repo / "src") if spelling == "ABSOLUTE" else spelling)
    assert "a/./" not in patch and "a//" not in patch
    assert patch.count("--- a/") == 3


def test_a_file_given_twice_is_diffed_once(repo: Path) -> None:
    patch = _applies(repo, "src/pkg/model.py", "./src/pkg/model.py", "src")
    assert patch.count("--- a/src/pkg/model.py") == 1


def test_applied_diff_equals_the_written_output(repo: Path) -> None:
    patch = _applies(repo, "src")
    assert npudsl("transform", "src", "-o", "out", cwd=repo).returncode == 0
    assert _git(repo, "apply", "-", stdin=patch).returncode == 0
    for name in ("pkg/model.py", "tail.py", "page.py"):
        assert (repo / "src" / name).read_bytes() == (repo / "out" / name).read_bytes()


def test_missing_final_newline_is_marked() -> None:
    patch = unified_diff("a = 1\nb = 2", "a = 1\nb = 3", "m.py")
    assert patch.endswith("-b = 2\n\\ No newline at end of file\n+b = 3\n\\ No newline at end of file\n")
    assert unified_diff("same\n", "same\n", "m.py") == ""
