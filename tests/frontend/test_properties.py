"""Property test: modules that spell npudsl every way, shadow its names and pick odd event and method names.

Whatever the module: no internal error, check and transform report the same errors, the output
parses and transforms to itself, and (with torch) the portable output computes what the module
says it computes, race-free when captured.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings

from codegen.check.diagnostics import Severity
from frontend_util import check, load, transform
from spelled_programs import spelled_modules

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def _errors(diagnostics: tuple) -> list[tuple[int, int, str]]:
    return sorted((d.line, d.col, d.code) for d in diagnostics if d.severity is Severity.ERROR)


def _transformed(source: str, target: str = "portable") -> str | None:
    """The output, checked for the properties every target keeps; None when the module has errors."""
    code, diagnostics = transform(source, target=target)
    assert _errors(diagnostics) == _errors(check(source))
    if _errors(diagnostics):
        assert code == source
        return None
    ast.parse(code)
    assert transform(code, target=target)[0] == code
    return code


def _run(code: str, name: str, backend: object = None) -> None:
    torch = pytest.importorskip("torch")
    module = load(code, name)
    x = torch.arange(1.0, 5.0)
    for index, factor in enumerate(module.EXPECTED):
        model = getattr(module, f"Block{index}")()
        if backend is not None:
            model = torch.compile(model, backend=backend, fullgraph=True)
        assert torch.equal(model(x), x * factor)


@FAST
@given(spelled_modules())
def test_every_spelling_transforms_soundly(source: str) -> None:
    _transformed(source, target="aclgraph")
    code = _transformed(source)
    if code is not None:
        _run(code, "spelled_portable")


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(spelled_modules())
def test_portable_output_is_race_free_when_captured(source: str) -> None:
    torch = pytest.importorskip("torch")
    from npudsl.race import npudsl_backend

    code = _transformed(source)
    if code is not None:
        torch._dynamo.reset()
        try:
            _run(code, "spelled_captured", backend=npudsl_backend)
        finally:
            torch._dynamo.reset()
