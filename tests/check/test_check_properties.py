"""Property tests: generated programs never crash check or transform, and the event rules match naive oracles."""

from __future__ import annotations

import ast
from collections import Counter

import hypothesis.strategies as st
import hypothesmith
import libcst
import pytest
from hypothesis import HealthCheck, given, settings

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.check.rules.pipeline import check_source
from codegen.driver.api import transform_with_index
from codegen.frontend.collect import collect
from codegen.frontend.ir import ModuleIR
from codegen.index.index import build_index
from npudsl.devices import DEFAULT_DEVICE
from programs import decorated_modules

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code may be odd, never wrong

FAST = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


def _check(source: str) -> tuple[Diagnostic, ...]:
    index = build_index([("generated", source)])
    return check_source(
        source, path="generated.py", module_name="generated", index=index, target="aclgraph", device=DEFAULT_DEVICE
    )


def _transform(source: str) -> tuple[str, tuple[Diagnostic, ...]]:
    index = build_index([("generated", source)])
    return transform_with_index(source, path="generated.py", module_name="generated", index=index, target="aclgraph")


def _assert_positions(source: str, diagnostics: tuple[Diagnostic, ...]) -> None:
    last_line = len(source.splitlines()) + 1
    for d in diagnostics:
        assert 1 <= d.line <= last_line and d.col >= 1, d.format()


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def _never_changes(source: str) -> None:
    """A module that names npudsl but decorates nothing: checked and transformed without a change."""
    text = source + "\nimport npudsl\n"
    found = _check(text)
    code, diagnostics = _transform(text)
    _assert_positions(text, found + diagnostics)
    assert code == text
    if _parses(text):
        assert found == diagnostics == ()
    else:
        assert [d.code for d in found] == ["NPD001"]


@FAST
@given(hypothesmith.from_grammar())
def test_grammar_programs_pass_through(source: str) -> None:
    _never_changes(source)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_node_programs_pass_through(source: str) -> None:
    _never_changes(source)


@FAST
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes(text: str) -> None:
    source = "import npudsl\n" + text
    _assert_positions(source, _check(source) + _transform(source)[1])


def _errors(diagnostics: tuple[Diagnostic, ...]) -> set[str]:
    return {d.code for d in diagnostics if d.severity is Severity.ERROR}


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(decorated_modules())
def test_decorated_programs(source: str) -> None:
    found = _check(source)
    _assert_positions(source, found)
    code, diagnostics = _transform(source)
    assert _errors(diagnostics) == _errors(found)  # same device: check says what transform refuses
    if _errors(found):
        assert code == source
        return
    assert _parses(code) and libcst.parse_module(code).code == code
    assert _transform(code)[0] == code  # transforming the output changes nothing


def _ir(source: str) -> ModuleIR:
    return collect(ast.parse(source), source, path="generated.py", module_name="generated").ir


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(decorated_modules())
def test_unknown_events_match_a_naive_oracle(source: str) -> None:
    ir = _ir(source)
    recorded = {(fn.owner, n) for fn in ir.functions for spec in fn.records for n in spec.names}
    wanted = Counter(
        spec.loc.line for fn in ir.functions for spec in fn.waits for n in spec.names if (fn.owner, n) not in recorded
    )
    assert Counter(d.line for d in _check(source) if d.code == "NPD201") == wanted


def _cyclic_groups(ir: ModuleIR) -> int:
    """Strongly connected groups with a cycle, by transitive closure (slow and obviously right)."""
    fns = list(ir.functions)
    reach = {
        (i, j)
        for i, a in enumerate(fns)
        for j, b in enumerate(fns)
        if a.owner == b.owner and {n for s in a.waits for n in s.names} & {n for s in b.records for n in s.names}
    }
    for k in range(len(fns)):
        reach |= {(i, j) for i in range(len(fns)) for j in range(len(fns)) if (i, k) in reach and (k, j) in reach}
    cyclic = [i for i in range(len(fns)) if (i, i) in reach]
    return len({frozenset(j for j in cyclic if (i, j) in reach and (j, i) in reach) for i in cyclic})


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(decorated_modules())
def test_cycles_match_a_naive_oracle(source: str) -> None:
    assert sum(1 for d in _check(source) if d.code == "NPD203") == _cyclic_groups(_ir(source))
