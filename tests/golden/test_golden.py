"""Golden files: every case and example, for every target. ``--update-golden`` rewrites them."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from codegen.targets import TARGETS
from golden.cases_util import REPO, case_inputs, golden_errors, golden_path, transform

CASES = case_inputs()


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("case_id,path", CASES, ids=[c for c, _ in CASES])
def test_golden(target: str, case_id: str, path: Path, update_golden: bool) -> None:
    results = transform(path, target)
    errors = [d.format().replace(str(REPO) + "/", "") for r in results if r.has_errors for d in r.diagnostics]
    if errors or (golden_errors(target, case_id)).exists():
        _compare(golden_errors(target, case_id), "\n".join(errors) + "\n", update_golden)
        return
    for result in results:
        expected_file = golden_path(target, case_id, result, path)
        actual = result.code if result.code is not None else result.file.source
        _compare(expected_file, actual, update_golden)


def _compare(expected_file: Path, actual: str, update: bool) -> None:
    if update:
        expected_file.parent.mkdir(parents=True, exist_ok=True)
        expected_file.write_text(actual, encoding="utf-8")
        return
    assert expected_file.exists(), f"missing golden {expected_file}; run pytest --update-golden"
    assert actual == expected_file.read_text(encoding="utf-8"), f"{expected_file} differs"


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("case_id,path", CASES, ids=[c for c, _ in CASES])
def test_second_pass_changes_nothing(target: str, case_id: str, path: Path, tmp_path: Path) -> None:
    """Transforming the output again, laid out like the input, is a no-op."""
    copy = tmp_path / path.name
    if path.is_dir():
        shutil.copytree(path, copy)
    else:
        shutil.copy(path, copy)
    first = transform(copy, target)
    if any(r.has_errors for r in first):
        pytest.skip("the case is an expected error for this target (see its .err golden)")
    for result in first:
        Path(result.file.path).write_text(result.code or result.file.source or "", encoding="utf-8")
    for result in transform(copy, target):
        assert not result.changed, f"second pass changed {result.file.path}"


def _npudsl_imports(code: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "npudsl":
            found += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "npudsl"]
    return found


# What a user imports from npudsl besides the decorators stays imported.
_KEPT = {"existing_imports": ["npudsl.compile"]}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("case_id,path", CASES, ids=[c for c, _ in CASES])
def test_output_compiles_and_imports_no_npudsl(target: str, case_id: str, path: Path) -> None:
    for result in transform(path, target):
        if result.has_errors:
            continue
        code = result.code if result.code is not None else result.file.source or ""
        compile(code, result.file.path, "exec")
        expected = _KEPT.get(case_id, [])
        if target == "portable" and "runtime." in code:
            expected = [*expected, "npudsl.runtime"]
        assert sorted(_npudsl_imports(code)) == sorted(expected), result.file.path
