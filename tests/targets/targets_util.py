"""Helpers of the target tests: transform a source string for one target, and read its diagnostics."""

from __future__ import annotations

import re
import textwrap

from codegen.check.diagnostics import Diagnostic
from codegen.driver.api import transform_with_index
from codegen.index.index import build_index

__all__ = ["diagnostics", "transform", "user_code"]


def _run(source: str, target: str, module: str) -> tuple[str, tuple[Diagnostic, ...]]:
    source = textwrap.dedent(source).lstrip("\n")
    index = build_index([(module, source)])
    return transform_with_index(source, path=f"{module}.py", module_name=module, index=index, target=target)


def transform(source: str, target: str, module: str = "m") -> str:
    """The generated code; fails the test on any error."""
    code, found = _run(source, target, module)
    errors = [d.format() for d in found if d.severity.value == "error"]
    assert not errors, errors
    return code


def diagnostics(source: str, target: str, module: str = "m") -> list[str]:
    """Each diagnostic as ``line:col: CODE severity``."""
    return [f"{d.line}:{d.col}: {d.code} {d.severity.value}" for d in _run(source, target, module)[1]]


def user_code(code: str) -> str:
    """The generated code from the first user class or function on (past imports, helpers and events)."""
    return code[re.search(r"^(class|def) (?!_)", code, re.M).start() :]
