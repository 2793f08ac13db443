"""A new user's first hour (issue 23): each mistake caught where it is made, and output in the order it happens."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_util import REPO, _env, npudsl
from npudsl.cli import main

EXAMPLE = REPO / "examples" / "moe_decoder.py"
_REFUSED = """from npudsl import on_stream


@on_stream("side")
def side(x, x):
    return x
"""


def _copy_example(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(EXAMPLE, src / "moe_decoder.py")
    return src


def test_check_output_names_a_missing_then_an_outdated_generated_file(tmp_path: Path) -> None:
    src = _copy_example(tmp_path)
    missing = npudsl("transform", "src", "--check", "-o", "gen", cwd=tmp_path)
    assert (missing.returncode, missing.stdout) == (1, "missing: gen/moe_decoder.py\n")
    assert not (tmp_path / "gen").exists()  # --check writes nothing, not even the folder
    assert npudsl("transform", "src", "-o", "gen", cwd=tmp_path).returncode == 0
    fresh = npudsl("transform", "src", "--check", "-o", "gen", cwd=tmp_path)
    assert (fresh.returncode, fresh.stdout) == (0, "")
    assert "1 file, 0 out of date" in fresh.stderr
    (src / "moe_decoder.py").write_text(EXAMPLE.read_text().replace('"shared"', '"expert"'))
    stale = npudsl("transform", "src", "--check", "-o", "gen", cwd=tmp_path)
    assert (stale.returncode, stale.stdout) == (1, "out of date: gen/moe_decoder.py\n")


@pytest.mark.parametrize("other", ["--diff", "--in-place"])
def test_check_with_a_writing_mode_is_a_usage_error_with_a_hint(tmp_path: Path, other: str) -> None:
    src = _copy_example(tmp_path)
    done = npudsl("transform", str(src), "--check", other, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"npudsl: error: --check writes nothing: it cannot go with {other} (hint: --check alone, "
        "or --check -o OUT to compare with generated code under OUT)\n"
    )


def _merged(*args: str, cwd: Path) -> list[str]:
    """The lines of stdout and stderr as one pipe shows them (both to the same pipe)."""
    done = subprocess.run(
        [sys.executable, "-m", "npudsl", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(None),
        timeout=120,
        check=False,
    )
    return done.stdout.splitlines()


def test_check_prints_the_summary_after_the_diagnostics_through_one_pipe(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(_REFUSED)
    lines = _merged("check", "bad.py", cwd=tmp_path)
    assert lines[-1].startswith("npudsl check: 1 file, 1 error, 1 warning")
    assert [line[:27] for line in lines[:-1]] == ["bad.py:4:2: NPD502 warning:", "bad.py:5:13: NPD001 error: "]


def test_transform_check_prints_the_summary_last_through_one_pipe(tmp_path: Path) -> None:
    _copy_example(tmp_path)
    lines = _merged("transform", "src", "--check", cwd=tmp_path)
    assert lines == [
        "would change: src/moe_decoder.py",
        "npudsl: 1 file, 1 would change, 0 with errors, 0 warnings (target aclgraph)",
    ]


def test_code_python_refuses_only_when_compiling_is_reported_and_never_written(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(_REFUSED)
    done = npudsl("transform", "bad.py", "-o", "out", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[1] == (
        "bad.py:5:13: NPD001 error: Python refuses this code when it compiles it: duplicate argument 'x' in "
        "function definition (hint: fix it as Python says; the module would fail on import)"
    )
    assert not (tmp_path / "out" / "bad.py").exists()


def test_schedule_summary_uses_the_unit_of_the_picture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    assert main(["schedule", str(EXAMPLE), "-o", str(tmp_path / "m.svg")]) == 0
    summary = capsys.readouterr().err
    picture = (tmp_path / "m.svg").read_text(encoding="utf-8")
    shown = re.search(r"predicted: ([\d.]+) (\S+) on \d+ streams vs ([\d.]+) (\S+) on one stream", picture)
    assert shown is not None
    assert f"{shown[1]} {shown[2]} vs {shown[3]} {shown[4]} on one stream" in summary


@pytest.mark.parametrize("given", [".", "./bad.py", "sub/../bad.py"])
def test_relative_paths_print_one_way_with_line_and_column(tmp_path: Path, given: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "bad.py").write_text(_REFUSED)
    text = npudsl("check", given, cwd=tmp_path).stdout.splitlines()
    assert [line.split(" ")[0] for line in text] == ["bad.py:4:2:", "bad.py:5:13:"]
    as_json = npudsl("check", given, "--format", "json", cwd=tmp_path).stdout
    assert '"path": "bad.py"' in as_json


def test_an_absolute_path_stays_absolute(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(_REFUSED)
    first = npudsl("check", str(tmp_path / "bad.py"), cwd=tmp_path).stdout.splitlines()[0]
    assert first.startswith(f"{tmp_path / 'bad.py'}:4:2: NPD502 warning:")


def test_schedule_prints_the_picture_then_the_summary_through_one_pipe(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    lines = _merged("schedule", str(EXAMPLE), cwd=tmp_path)
    assert lines[0].startswith("<svg") or lines[0].startswith("<?xml")
    assert lines[-1].startswith(f"{EXAMPLE}: 2 streams (default, shared), ")
