"""``--in-place`` loses nothing: links are written through, inode, owner and mode kept; odd files are skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_util import REPO, npudsl
from npudsl.cli import main
from npudsl.cli.files import write_atomic

SEED = (REPO / "examples" / "seed000.py").read_text(encoding="utf-8")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    (tmp_path / "real").mkdir()
    path = tmp_path / "real" / "model.py"
    path.write_text(SEED, encoding="utf-8")
    return path


def _in_place(*paths: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transform", *map(str, paths), "--in-place", "--jobs", "1"]) == 0
    capsys.readouterr()


def test_a_symlink_is_written_through(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "link.py"
    link.symlink_to(model)
    _in_place(link, capsys=capsys)
    assert link.is_symlink() and os.readlink(link) == str(model)
    assert "import torchair" in model.read_text(encoding="utf-8")
    assert os.listdir(tmp_path / "real") == ["model.py"]  # no temporary file left beside the target


def test_hard_links_keep_sharing_the_new_text(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.py"
    os.link(model, other)
    inode = model.stat().st_ino
    _in_place(model, capsys=capsys)
    assert model.stat().st_ino == inode == other.stat().st_ino and model.stat().st_nlink == 2
    assert "import torchair" in other.read_text(encoding="utf-8")


def test_mode_and_owner_are_kept(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model.chmod(0o751)
    if os.geteuid() == 0:  # root can hand the file to someone else, and must give it back the same way
        os.chown(model, 12345, 54321)
    before = model.stat()
    _in_place(model, capsys=capsys)
    after = model.stat()
    assert "import torchair" in model.read_text(encoding="utf-8")
    assert (after.st_mode, after.st_uid, after.st_gid) == (before.st_mode, before.st_uid, before.st_gid)


def test_new_files_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomic(str(tmp_path / "new.py"), "x = 1\n")
    finally:
        os.umask(old)
    assert (tmp_path / "new.py").stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("given", ["folder", "file"])
def test_a_fifo_named_py_is_skipped_with_a_warning(tmp_path: Path, given: str) -> None:
    (tmp_path / "model.py").write_text(SEED, encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.py")
    paths = [str(tmp_path)] if given == "folder" else [str(tmp_path / "pipe.py"), str(tmp_path / "model.py")]
    result = npudsl("transform", *paths, "--in-place", timeout=60)  # before: blocked forever opening the FIFO
    assert result.returncode == 0, result.stderr
    assert f"{tmp_path / 'pipe.py'}:1:1: NPD003 warning: not a regular file (a FIFO); skipped" in result.stderr
    assert "import torchair" in (tmp_path / "model.py").read_text(encoding="utf-8")
