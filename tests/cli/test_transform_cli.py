"""``npudsl transform``: outputs, exit codes, atomic writes, files that are not ours left alone."""

from __future__ import annotations

import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest

from npudsl.cli import main

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples" / "seed000.py"
PLAIN = "import torch\n\n\ndef f(x):  # npudsl-free\n    return x  +  1\n"
BROKEN = "from npudsl import on_stream\n\n\n@on_stream(1)\ndef f(x):\n    return x\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    shutil.copy(SEED, tmp_path / "pkg" / "seed000.py")
    (tmp_path / "pkg" / "plain.py").write_text(PLAIN)
    return tmp_path


def test_one_file_prints_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transform", str(SEED)]) == 0
    out, err = capsys.readouterr()
    assert "torchair.scope.npu_stream_switch" in out
    assert err.strip().splitlines()[-1].startswith("npudsl: 1 file, 1 changed")


def test_many_files_without_an_output_flag_write_nothing(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (tree / "pkg" / "seed000.py").read_text()
    assert main(["transform", str(tree / "pkg")]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "nothing written" in err
    assert (tree / "pkg" / "seed000.py").read_text() == before


def test_output_tree_keeps_relative_paths(tree: Path) -> None:
    out = tree / "out"
    assert main(["transform", str(tree / "pkg"), "-o", str(out)]) == 0
    assert "tagged_event_wait" in (out / "seed000.py").read_text()
    assert (out / "plain.py").read_text() == PLAIN  # every result, so OUT is a complete tree
    assert main(["transform", str(SEED), "-o", str(tree / "single")]) == 0
    assert (tree / "single" / "seed000.py").exists()


def test_in_place_then_check_is_clean(tree: Path) -> None:
    assert main(["transform", str(tree / "pkg"), "--check"]) == 1
    assert main(["transform", str(tree / "pkg"), "--in-place"]) == 0
    assert "import torchair" in (tree / "pkg" / "seed000.py").read_text()
    assert (tree / "pkg" / "plain.py").read_text() == PLAIN
    assert main(["transform", str(tree / "pkg"), "--check"]) == 0
    assert not list((tree / "pkg").glob(".npudsl-*"))


def test_diff(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["transform", str(tree / "pkg" / "seed000.py"), "--diff"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- a/") and "+import torchair" in out


def test_a_file_with_an_error_is_never_written(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tree / "pkg" / "bad.py"
    bad.write_text(BROKEN)
    assert main(["transform", str(tree / "pkg"), "--in-place"]) == 1
    assert bad.read_text() == BROKEN
    assert main(["transform", str(tree / "pkg"), "-o", str(tree / "out")]) == 1
    assert not (tree / "out" / "bad.py").exists() and (tree / "out" / "plain.py").exists()
    err = capsys.readouterr().err
    assert f"{bad}:4:12: NPD102 error: stream tag 1 is not" in err
    assert "import torchair" in (tree / "pkg" / "seed000.py").read_text()  # the good file still transforms


def test_plain_files_are_untouched_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain.py"
    plain.write_bytes(PLAIN.encode())
    assert main(["transform", str(plain)]) == 0
    assert capsys.readouterr().out == PLAIN


@pytest.mark.parametrize(
    "argv",
    [
        ["transform"],
        ["transform", "x.py", "--target", "tpu"],
        ["frobnicate"],
        ["transform", "/no/such/file.py"],
        ["transform", "a.py", "--in-place", "--diff"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    assert main(argv) == 2


def test_syntax_error_is_positioned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import npudsl\ndef f(:\n    pass\n")
    assert main(["transform", str(bad)]) == 1
    assert f"{bad}:2:7: NPD001 error: syntax error" in capsys.readouterr().err


def test_parallel_jobs_give_the_same_result(tmp_path: Path) -> None:
    src = tmp_path / "src"  # outputs outside the inputs: a second run must not see the first one's files
    src.mkdir()
    for i in range(6):
        shutil.copy(SEED, src / f"m{i}.py")
    assert main(["transform", str(src), "-o", str(tmp_path / "j1"), "--jobs", "1"]) == 0
    assert main(["transform", str(src), "-o", str(tmp_path / "j2"), "--jobs", "2"]) == 0
    for i in range(6):
        assert (tmp_path / "j1" / f"m{i}.py").read_text() == (tmp_path / "j2" / f"m{i}.py").read_text()


def test_schedule_subcommand_writes_a_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "core_split.svg"
    assert main(["schedule", str(REPO / "examples" / "core_split.py"), "-o", str(out)]) == 0
    assert ElementTree.parse(out).getroot().tag.endswith("svg")
    out, err = capsys.readouterr()
    assert out == "" and "predicted saving" in err
    assert main(["schedule"]) == 2
