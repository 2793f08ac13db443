"""Every generated golden file calls only APIs that the real torchair / torch have.

Goldens live at tests/golden/<target>/**/*.py (inputs in tests/golden/cases/);
whatever exists when the tests are collected is checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_contract import ApiTable, api_references, verify_source

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
NPU_TARGETS = ("aclgraph", "ge", "npugraph_ex")
TARGETS = (*NPU_TARGETS, "cuda")

# Each graph mode has its own sync primitive, and each fails in the other mode.
FORBIDDEN = {
    "aclgraph": {"torchair.scope.npu_wait_tensor"},  # raises under reduce-overhead
    "ge": {  # no GE converter for tagged events
        "torchair.ops.npu_create_tagged_event",
        "torchair.ops.npu_tagged_event_record",
        "torchair.ops.npu_tagged_event_wait",
        "torchair.ops.npu_record_tagged_stream",
    },
}


def _goldens() -> list[pytest.param]:
    found = [(t, p) for t in TARGETS for p in sorted((GOLDEN / t).glob("**/*.py"))]
    return [pytest.param(t, p, id=f"{t}/{p.relative_to(GOLDEN / t)}") for t, p in found]


def _format(path: Path, problems: list) -> str:
    return "\n".join(f"{path}:{p.line}:{p.col}: {p.name}: {p.message}" for p in problems)


@pytest.mark.parametrize("target, path", _goldens())
def test_golden_calls_real_apis(target: str, path: Path, npu_table: ApiTable, cuda_table: ApiTable) -> None:
    code = path.read_text(encoding="utf-8")
    table = cuda_table if target == "cuda" else npu_table
    problems = verify_source(code, table)
    assert not problems, _format(path, problems)
    wrong = [r for r in api_references(code, npu_table) if r.name in FORBIDDEN.get(target, set())]
    if target == "cuda":
        wrong = api_references(code, npu_table)
    user_wrote = {r.name for r in api_references(_input_of(target, path), npu_table)}
    wrong = [r for r in wrong if r.name not in user_wrote]  # the user's own imports are not generated
    assert not wrong, "not for this target:\n" + _format(path, wrong)


def _input_of(target: str, path: Path) -> str:
    relative = path.relative_to(GOLDEN / target)
    candidates = [GOLDEN / "cases" / relative, GOLDEN.parents[1] / relative]
    found = next((c for c in candidates if c.exists()), None)
    return found.read_text(encoding="utf-8") if found else ""


def test_golden_targets_are_known() -> None:
    """A golden folder for a target this test does not check would go unverified."""
    if GOLDEN.is_dir():
        unknown = {p.name for p in GOLDEN.iterdir() if p.is_dir()} - {*TARGETS, "cases", "portable"}
        assert not unknown, f"golden targets not covered by the contract test: {sorted(unknown)}"
