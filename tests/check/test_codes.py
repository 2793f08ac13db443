"""The table of codes (npudsl/codes.py) is the only place a code is spelled, and every code is exercised.

Every code has a bad case (reporting it) and an ok case (a near miss that does
not); docs/check.md's table and SARIF's rules are the table's rows.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from check_cases import all_cases, expected
from code_table import BEGIN, DOCS, END, page_with_table
from codegen.check.diagnostics import Diagnostic, Severity
from codegen.check.rules import RULES
from npudsl import codes
from npudsl.cli.sarif import sarif_log

ROOT = Path(__file__).resolve().parents[2]
_CODE = re.compile(r"NPD\d{3}")
_OK_LINE = re.compile(r"^# ok: (.*)$", re.MULTILINE)
# Codes whose cases cannot be case files: (test file, bad test, ok test), each of which names the code.
ELSEWHERE = {
    codes.NOT_REGULAR: (
        "tests/cli/test_in_place_files.py",
        "test_a_fifo_named_py_is_skipped_with_a_warning",
        "test_a_fifo_named_py_is_skipped_with_a_warning",
    ),  # a FIFO beside a regular file
    codes.TENSOR_GUARD: (
        "tests/runtime/test_guard_errors.py",
        "test_a_tensor_for_a_bool_guard_names_the_guard_and_its_position",
        "test_a_python_bool_guard_still_runs",
    ),
}


def _ok_codes(case: Path) -> set[str]:
    """What an ok case is the near miss of: the codes in its name and on its ``# ok:`` line."""
    files = [case] if case.is_file() else sorted(case.rglob("*.py"))
    named = {m.upper() for m in re.findall(r"npd\d{3}", case.name)}
    return named | {c for f in files for line in _OK_LINE.findall(f.read_text("latin-1")) for c in _CODE.findall(line)}


def _test_functions(path: str) -> dict[str, str]:
    source = (ROOT / path).read_text(encoding="utf-8")
    return {
        node.name: ast.get_source_segment(source, node) or ""
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef)
    }


def test_every_code_has_a_bad_and_an_ok_case() -> None:
    bad = {e.code for case in all_cases() for e in expected(case)}
    ok = {code for case in all_cases() if case.stem.endswith("_ok") for code in _ok_codes(case)}
    for code, (path, bad_test, ok_test) in ELSEWHERE.items():
        tests = _test_functions(path)
        assert code in tests[bad_test] and ok_test in tests, code
    assert set(codes.TABLE) - set(ELSEWHERE) <= bad, sorted(set(codes.TABLE) - set(ELSEWHERE) - bad)
    assert set(codes.TABLE) - set(ELSEWHERE) <= ok, sorted(set(codes.TABLE) - set(ELSEWHERE) - ok)
    assert bad <= set(codes.TABLE)


def _docstrings(tree: ast.Module) -> set[int]:
    scopes = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
    owners = [tree, *(n for n in ast.walk(tree) if isinstance(n, scopes))]
    return {
        id(o.body[0].value)
        for o in owners
        if o.body and isinstance(o.body[0], ast.Expr) and isinstance(o.body[0].value, ast.Constant)
    }


def _spelled_codes(path: Path) -> list[str]:
    """``line: 'text'`` for each string (f-string parts too) of ``path`` that spells a code; docstrings are prose."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    return [
        f"{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and _CODE.search(node.value)
    ]


def test_no_code_is_spelled_outside_the_table() -> None:
    sources = [p for package in ("npudsl", "codegen") for p in sorted((ROOT / package).rglob("*.py"))]
    found = [f"{p.relative_to(ROOT)}:{hit}" for p in sources if p.name != "codes.py" for hit in _spelled_codes(p)]
    assert found == [], "use the constants of npudsl.codes:\n" + "\n".join(found)


def test_the_grep_sees_a_literal_code_in_a_message(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('"""NPD201 in a docstring is prose."""\nX = f"{1} NPD201 oops"\n')
    assert _spelled_codes(tmp_path / "m.py") == ["2: ' NPD201 oops'"]


def test_the_docs_table_is_the_code_table() -> None:
    page = DOCS.read_text(encoding="utf-8")
    assert BEGIN in page and END in page
    assert page == page_with_table(page), "run: python tests/check/code_table.py"


def test_rules_are_checks_of_the_table() -> None:
    assert {rule.code for rule in RULES} <= {c.id for c in codes.TABLE.values() if c.origin == "check"}
    for rule in RULES:
        assert (rule.severity, rule.title) == (codes.TABLE[rule.code].severity, codes.TABLE[rule.code].title)


def test_a_diagnostic_takes_its_severity_from_the_table() -> None:
    assert Diagnostic(path="m.py", line=1, col=1, code=codes.UNUSED_RECORD, message="m").severity is Severity.WARNING
    assert Diagnostic(path="m.py", line=1, col=1, code=codes.UNKNOWN_EVENT, message="m").severity is Severity.ERROR
    with pytest.raises(ValueError, match="NPD505: npudsl.codes.TABLE says warning, not error"):
        Diagnostic(path="m.py", line=1, col=1, code=codes.UNUSED_RECORD, message="m", severity=Severity.ERROR)
    with pytest.raises(ValueError, match="NPD599 is not in npudsl.codes.TABLE"):
        Diagnostic(path="m.py", line=1, col=1, code="NPD599", message="m", severity=Severity.WARNING)


def test_sarif_describes_each_code_by_its_own_row() -> None:
    found = [
        Diagnostic(path="m.py", line=1, col=1, code=code, message="m")
        for code in (codes.UNKNOWN_EVENT, codes.EVENT_TWO_STREAMS, codes.NO_CALL_SITE)
    ]
    rules = json.loads(sarif_log(found))["runs"][0]["tool"]["driver"]["rules"]
    assert [(r["id"], r["shortDescription"]["text"], r["defaultConfiguration"]["level"]) for r in rules] == [
        ("NPD201", "NPD201: unknown event", "error"),
        ("NPD202", "NPD202: event recorded on two streams", "error"),
        ("NPD502", "NPD502: stream function with no visible call site", "warning"),
    ]


def test_the_decorators_accept_every_near_miss_of_npd1xx() -> None:
    pytest.importorskip("torch")
    case = next(p for p in all_cases() if p.name == "npd1xx_decorator_args_ok.py")
    namespace: dict[str, object] = {"__name__": "npd1xx_ok"}
    exec(compile(case.read_text(encoding="utf-8"), str(case), "exec"), namespace)  # raises DecoratorError if not
    assert callable(namespace["Good"])
