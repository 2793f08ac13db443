"""The rewrite prints statements as ``Module.code`` does, without libcst's per-node position bookkeeping."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from codegen.rewrite import printing

REPO = Path(__file__).resolve().parents[2]
_SOURCES = sorted([*REPO.glob("examples/*.py"), *REPO.glob("tests/corpus/*/*.py"), *REPO.glob("tests/golden/*/*.py")])


@pytest.mark.parametrize("path", _SOURCES[:: max(1, len(_SOURCES) // 40)], ids=lambda p: p.relative_to(REPO).as_posix())
def test_statements_print_as_module_code_prints_them(path: Path) -> None:
    parsed = cst.parse_module(path.read_text(encoding="utf-8"))
    expected = cst.Module(body=parsed.body, default_indent=parsed.default_indent, default_newline="\r\n").code
    assert printing.module_code(parsed.body, indent=parsed.default_indent, newline="\r\n") == expected
    assert expected.count("\r\n") >= len(parsed.body)  # the newline asked for, not the file's


def test_without_libcst_codegen_state_module_code_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    body = cst.parse_module("if x:\n\tpass\n").body
    monkeypatch.setattr(printing, "_STATE", None)
    assert printing.module_code(body, indent="\t", newline="\n") == "if x:\n\tpass\n"


def test_an_error_while_printing_passes_through() -> None:
    broken = cst.SimpleStatementLine(body=[cst.Expr(cst.Name("x"))]).with_changes(body=[object()])
    with pytest.raises(AttributeError):
        printing.module_code([broken], indent="    ", newline="\n")
