"""``npudsl check`` from the command line: output formats, exit codes, devices, unreadable input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import codegen.driver.api
from check_cases import CASES
from npudsl.cli import main
from npudsl.devices import DEVICES

CLEAN = CASES / "npd201_unknown_event_ok.py"
WARNS = CASES / "npd505_unused_record_bad.py"
ERRORS = CASES / "npd203_cycle_bad.py"
SPLIT = CASES / "npd302_core_sum_ok.py"  # 8/16 beside 16/32: fits 24/48 exactly


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(["check", *argv])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_clean_file_exits_0_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = _check(capsys, str(CLEAN))
    assert (code, lines) == (0, [])
    assert "0 errors, 0 warnings" in err


def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = _check(capsys, str(WARNS))
    assert code == 0
    assert lines == [
        f'{WARNS}:11:6: NPD505 warning: Block.work records event "extra", but no function in class '
        'Block waits for it (hint: add @after("extra") where that work is needed, or drop the record)'
    ]


def test_errors_exit_1_with_the_cycle_spelled_out(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = _check(capsys, str(ERRORS))
    assert code == 1
    assert f"{ERRORS}:10:6: NPD203 " in lines[0]
    assert "Pair.first -> e1 -> Pair.second -> e2 -> Pair.first" in lines[0]
    assert "Ring.one -> z -> Ring.three -> y -> Ring.two -> x -> Ring.one" in lines[2]


def test_json_is_one_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = _check(capsys, str(ERRORS), str(WARNS), "--format", "json")
    records = [json.loads(line) for line in lines]
    assert code == 1 and len(records) == 4
    assert set(records[0]) == {"path", "line", "col", "code", "severity", "message", "hint"}
    assert [(r["code"], r["severity"]) for r in records] == [("NPD203", "error")] * 3 + [("NPD505", "warning")]
    assert (records[3]["path"], records[3]["line"], records[3]["col"]) == (str(WARNS), 11, 6)


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_every_device_profile_is_accepted(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, lines, err = _check(capsys, str(CLEAN), "--device", name)
    assert (code, lines) == (0, []) and name in err


def test_device_decides_the_core_range(capsys: pytest.CaptureFixture[str]) -> None:
    assert _check(capsys, str(SPLIT), "--device", "atlas-a2")[0] == 0
    code, lines, _ = _check(capsys, str(SPLIT), "--device", "ATLAS-A2-910B3")
    assert code == 1
    assert {line.split()[1] for line in lines} == {"NPD302"}


def test_cores_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert _check(capsys, str(SPLIT), "--cores", "24,48")[0] == 0
    code, lines, _ = _check(capsys, str(SPLIT), "--cores", "12, 32")
    assert code == 1
    assert {line.split()[1] for line in lines} == {"NPD301"}
    assert "--cores 12,32 (12 cube / 32 vector cores)" in lines[0]


def test_unknown_device_exits_2_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = _check(capsys, str(CLEAN), "--device", "tpu-v9")
    assert (code, lines) == (2, [])
    assert "unknown device 'tpu-v9'" in err
    assert all(name in err for name in DEVICES)


@pytest.mark.parametrize("cores", ["24", "0,48", "a,b", "24,48,2", "-1,4"])
def test_malformed_cores_exit_2(capsys: pytest.CaptureFixture[str], cores: str) -> None:
    code, _, err = _check(capsys, str(CLEAN), f"--cores={cores}")
    assert code == 2 and "--cores" in err


def test_device_and_cores_together_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert _check(capsys, str(CLEAN), "--device", "atlas-a2", "--cores", "1,1")[0] == 2


def test_missing_path_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert _check(capsys, str(tmp_path / "nope.py"))[0] == 2


def test_syntax_error_position(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = _check(capsys, str(CASES / "npd001_syntax_unicode_bad.py"))
    assert code == 1
    assert lines[0].startswith(
        f"{CASES / 'npd001_syntax_unicode_bad.py'}:5:20: NPD001 error: syntax error: unmatched ')'"
    )


def test_non_utf8_file_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES / "npd002_not_utf8_bad.py"
    code, lines, _ = _check(capsys, str(case))
    assert code == 1
    assert lines == [f"{case}:5:12: NPD002 error: file is not valid UTF-8 (hint: save the file as UTF-8 (PEP 3120))"]


def test_unreadable_file_is_a_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "gone.py").symlink_to(tmp_path / "missing-target.py")
    code, lines, _ = _check(capsys, str(tmp_path))
    assert code == 1
    assert lines == [
        f"{tmp_path / 'gone.py'}:1:1: NPD002 error: cannot read file: No such file or directory "
        "(hint: check the path and its permissions)"
    ]


def test_check_writes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = ERRORS.read_bytes()
    (tmp_path / "model.py").write_bytes(source)
    _check(capsys, str(tmp_path))
    assert os.listdir(tmp_path) == ["model.py"] and (tmp_path / "model.py").read_bytes() == source


def test_internal_error_exits_2_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> tuple[()]:
        raise RuntimeError("a bug in a rule")

    monkeypatch.setattr(codegen.driver.api, "validate", broken)  # check runs the transform's front half
    code, lines, err = _check(capsys, str(CLEAN), str(WARNS))
    assert (code, lines) == (2, [])
    assert err.count("internal error in npudsl") == 2 and "RuntimeError: a bug in a rule" in err
