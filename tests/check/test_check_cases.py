"""Every case file gets exactly the diagnostics its comments announce (code, line, column, severity)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from check_cases import CASES, actual, all_cases, expected
from codegen.check.diagnostics import TransformError
from codegen.check.rules import RULES
from codegen.driver.api import transform_source

READER_CODES = ("NPD001", "NPD002", *(f"NPD10{i}" for i in range(1, 10)), "NPD110")


@pytest.mark.parametrize("case", all_cases(), ids=lambda p: p.name)
def test_case_reports_what_its_comments_say(case: Path) -> None:
    assert actual(case) == expected(case)


def _codes_in(names: list[str]) -> set[str]:
    return {m.upper() for name in names for m in re.findall(r"npd\d{3}", name)}


def test_every_rule_has_a_bad_and_an_ok_case() -> None:
    announced = {e.code for case in all_cases() for e in expected(case)}
    ok_cases = [p.name for p in all_cases() if p.stem.endswith("_ok")]
    for rule in RULES:
        assert rule.code in announced, f"no case reports {rule.code}"
        assert rule.code in _codes_in(ok_cases), f"no ok case for {rule.code}"
    assert set(READER_CODES) <= announced
    assert {"NPD001", "NPD002"} <= _codes_in(ok_cases)


@pytest.mark.parametrize("case", [p for p in all_cases() if p.stem.endswith("_ok")], ids=lambda p: p.name)
def test_ok_cases_are_silent(case: Path) -> None:
    assert expected(case) == []


def _default_device_bad_cases() -> list[Path]:
    """Single-file bad cases checked against the default device (the one transform uses)."""
    return [p for p in all_cases() if p.is_file() and p.stem.endswith("_bad") and b"# device:" not in p.read_bytes()]


@pytest.mark.parametrize("case", _default_device_bad_cases(), ids=lambda p: p.name)
def test_transform_refuses_exactly_the_cases_with_errors(case: Path) -> None:
    errors = {e.code for e in expected(case) if e.severity == "error"}
    try:
        source = case.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        assert errors == {"NPD002"}
        return
    if errors:
        with pytest.raises(TransformError) as raised:
            transform_source(source, path=str(case), module_name=case.stem)
        assert {d.code for d in raised.value.diagnostics if d.severity.value == "error"} == errors
    else:
        transform_source(source, path=str(case), module_name=case.stem)


def test_cases_folder_is_where_the_harness_looks() -> None:
    assert CASES.is_dir() and len(all_cases()) >= 24
