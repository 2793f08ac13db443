"""``# noqa``, ``--select``/``--ignore``, and the CI formats: SARIF 2.1.0 (schema-valid) and GitHub annotations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_util import REPO, npudsl
from codegen.check.diagnostics import Diagnostic, Severity
from npudsl.cli.noqa import Rules, noqa_lines
from npudsl.cli.report import render_github

jsonschema = pytest.importorskip("jsonschema")
CASES = REPO / "tests" / "check" / "cases"
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
WARN = Diagnostic(path="m.py", line=3, col=5, code="NPD505", message="w", severity=Severity.WARNING)
ERROR = Diagnostic(path="m.py", line=3, col=5, code="NPD201", message="e")


@pytest.mark.parametrize(
    "line,silenced",
    [
        ("x = 1  # noqa", True),
        ("x = 1  # noqa: NPD505", True),
        ("x = 1  # NOQA:NPD505,NPD506", True),
        ("x = 1  # noqa: NPD506", False),
        ("x = 1  # noqa: E501", False),
        ('x = "# noqa"', False),
        ("x = 1", False),
        ("x = 1  # type: ignore  # noqa: E501 NPD505", True),
    ],
)
def test_noqa_on_the_diagnostics_line(line: str, silenced: bool) -> None:
    source = f"import npudsl\n\n{line}\n"
    kept, quiet = Rules().keep([WARN], source)
    assert (kept == (), quiet) == (silenced, int(silenced))


def test_errors_are_never_silenced() -> None:
    assert Rules(ignore=("NPD",)).keep([ERROR, WARN], "a\nb\nc  # noqa\n") == ((ERROR,), 1)


def test_noqa_in_a_file_that_does_not_tokenize() -> None:
    assert noqa_lines("def f(:  # noqa: NPD001\n") == {1: frozenset({"NPD001"})}


@pytest.mark.parametrize(
    "select,ignore,shown",
    [
        ((), (), True),
        (("NPD5",), (), True),
        (("NPD2",), (), False),
        ((), ("NPD50",), False),
        (("NPD5",), ("NPD505",), False),
    ],
)
def test_select_and_ignore_by_prefix(select: tuple[str, ...], ignore: tuple[str, ...], shown: bool) -> None:
    assert bool(Rules(select=select, ignore=ignore).keep([WARN], None)[0]) is shown


def test_noqa_silences_a_real_warning_from_the_command_line(tmp_path: Path) -> None:
    source = (CASES / "npd505_unused_record_bad.py").read_text(encoding="utf-8").splitlines(keepends=True)
    source[10] = source[10].rstrip("\n") + "  # noqa: NPD505\n"
    (tmp_path / "m.py").write_text("".join(source), encoding="utf-8")
    result = npudsl("check", str(tmp_path / "m.py"))
    assert (result.returncode, result.stdout) == (0, "")
    assert "0 warnings, 1 silenced" in result.stderr


def test_sarif_log_is_valid_sarif_2_1_0(tmp_path: Path) -> None:
    for name in ("npd203_cycle_bad.py", "npd505_unused_record_bad.py"):
        (tmp_path / name).write_bytes((CASES / name).read_bytes())
    result = npudsl("check", ".", "--format", "sarif", cwd=tmp_path)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    jsonschema.validate(log, SCHEMA)
    results = log["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error"] * 3 + ["warning"]
    where = results[3]["locations"][0]["physicalLocation"]
    assert where == {
        "artifactLocation": {"uri": "npd505_unused_record_bad.py"},
        "region": {"startLine": 11, "startColumn": 6},
    }
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [rules[r["ruleIndex"]]["id"] for r in results] == [r["ruleId"] for r in results]


def test_empty_sarif_log_is_valid(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("x = 1\n")
    result = npudsl("check", str(tmp_path), "--format", "sarif")
    jsonschema.validate(json.loads(result.stdout), SCHEMA)
    assert json.loads(result.stdout)["runs"][0]["results"] == []


def test_github_annotations(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes((CASES / "npd505_unused_record_bad.py").read_bytes())
    result = npudsl("check", "m.py", "--format", "github", cwd=tmp_path)
    assert result.stdout.startswith("::warning file=m.py,line=11,col=6,title=NPD505::NPD505 Block.work records")
    odd = Diagnostic(path="a,b:c.py", line=1, col=2, code="NPD201", message="50%\nnext")
    assert render_github(odd) == "::error file=a%2Cb%3Ac.py,line=1,col=2,title=NPD201::NPD201 50%25%0Anext"
