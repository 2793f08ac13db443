"""``transform`` never writes a file with an error, and ``--in-place`` writes atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from check_cases import CASES
from npudsl.cli import files, main

BAD = CASES / "npd201_unknown_event_bad.py"
GOOD = CASES / "npd302_core_sum_ok.py"


def _copy(tmp_path: Path, *cases: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    for case in cases:
        (folder / case.name).write_bytes(case.read_bytes())
    return folder


def test_in_place_leaves_files_with_errors_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(tmp_path, BAD, GOOD)
    assert main(["transform", str(folder), "--in-place", "--jobs", "1"]) == 1
    assert (folder / BAD.name).read_bytes() == BAD.read_bytes()
    assert (folder / GOOD.name).read_bytes() != GOOD.read_bytes()
    assert "NPD201" in capsys.readouterr().err


def test_output_folder_gets_no_file_with_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(tmp_path, BAD, GOOD)
    out = tmp_path / "out"
    assert main(["transform", str(folder), "-o", str(out), "--jobs", "1"]) == 1
    assert sorted(os.listdir(out)) == [GOOD.name]
    capsys.readouterr()


def test_core_limit_beyond_the_default_device_is_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(tmp_path, CASES / "npd301_core_range_bad.py")
    before = (folder / "npd301_core_range_bad.py").read_bytes()
    assert main(["transform", str(folder), "--in-place", "--jobs", "1"]) == 1
    assert (folder / "npd301_core_range_bad.py").read_bytes() == before
    assert "NPD301" in capsys.readouterr().err


def test_interrupted_in_place_write_keeps_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(tmp_path, GOOD)
    before = (folder / GOOD.name).read_bytes()

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt("power cut between the write and the rename")

    monkeypatch.setattr(files.os, "replace", interrupted)
    assert main(["transform", str(folder), "--in-place", "--jobs", "1"]) == 130  # one line, no traceback
    assert (folder / GOOD.name).read_bytes() == before
    assert os.listdir(folder) == [GOOD.name]  # no temporary file left behind
    capsys.readouterr()


def test_interrupted_while_writing_keeps_the_original(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "model.py"
    target.write_text("original\n", encoding="utf-8")

    def failing_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", failing_fsync)
    with pytest.raises(OSError):
        files.write_atomic(str(target), "new text that never lands\n" * 1000)
    assert target.read_text(encoding="utf-8") == "original\n"
    assert os.listdir(tmp_path) == ["model.py"]


def test_in_place_keeps_the_file_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(tmp_path, GOOD)
    (folder / GOOD.name).chmod(0o640)
    assert main(["transform", str(folder), "--in-place", "--jobs", "1"]) == 0
    assert (folder / GOOD.name).stat().st_mode & 0o777 == 0o640
    assert os.listdir(folder) == [GOOD.name]
    capsys.readouterr()
