"""``-o`` that cannot be written, or would write two inputs to one file: exit 2, a message, nothing written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from cli_util import REPO, npudsl
from npudsl.cli import main

SEED = (REPO / "examples" / "seed000.py").read_text(encoding="utf-8")


def _two_models(tmp_path: Path) -> tuple[Path, Path]:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "model.py").write_text(SEED, encoding="utf-8")
    return tmp_path / "a" / "model.py", tmp_path / "b" / "model.py"


def test_two_inputs_onto_one_output_are_refused_before_writing(tmp_path: Path) -> None:
    first, second = _two_models(tmp_path)
    result = npudsl("transform", str(first), str(second), "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert str(first) in result.stderr and str(second) in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_folder_and_a_file_inside_it_mapping_to_one_output(tmp_path: Path) -> None:
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "file.py").write_text(SEED, encoding="utf-8")
    (tmp_path / "dir" / "sub" / "file.py").write_text(SEED, encoding="utf-8")
    result = npudsl(
        "transform", str(tmp_path / "dir" / "sub" / "file.py"), str(tmp_path / "dir"), "-o", str(tmp_path / "out")
    )
    assert result.returncode == 2 and "would both be written to" in result.stderr
    assert not (tmp_path / "out").exists()


def test_output_onto_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("mine\n")
    result = npudsl("transform", str(REPO / "examples" / "seed000.py"), "-o", str(tmp_path / "taken"))
    assert result.returncode == 2 and "exists and is not a folder" in result.stderr
    assert "Traceback" not in result.stderr and (tmp_path / "taken").read_text() == "mine\n"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc, where nobody can create files")
def test_output_into_a_folder_nobody_can_write() -> None:
    result = npudsl("transform", str(REPO / "examples" / "seed000.py"), "-o", "/proc/npudsl-out")
    assert result.returncode == 2 and "/proc/npudsl-out" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any folder")
def test_output_into_a_read_only_folder(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    result = npudsl("transform", str(REPO / "examples" / "seed000.py"), "-o", str(locked / "out"))
    assert result.returncode == 2 and "permission denied" in result.stderr.lower()


def test_a_temporary_file_that_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(*args: object, **kwargs: object) -> tuple[int, str]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "mkstemp", full)
    assert main(["transform", str(REPO / "examples" / "seed000.py"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "No space left on device" in err and "Traceback" not in err
