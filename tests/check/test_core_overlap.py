"""NPD302 reads the schedule of the target: what a case file cannot say with its comments alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from check_cases import CASES, actual, expected
from codegen.check.rules.pipeline import check_file
from codegen.driver.run import discover, index_run, read_sources
from npudsl.devices import DEFAULT_DEVICE

APART = CASES / "npd302_joined_between_ok.py"


def _codes(case: Path, target: str) -> list[tuple[int, str]]:
    files = read_sources(discover([str(case)]))
    index = index_run(files)
    reports = [check_file(f, index, target=target, device=DEFAULT_DEVICE) for f in files]
    assert not [r.internal_error for r in reports if r.internal_error]
    return [(d.line, d.code) for r in reports for d in r.diagnostics]


@pytest.mark.parametrize("target", ["portable", "aclgraph", "npugraph_ex", "cuda"])
def test_limits_joined_apart_pass_on_every_target_with_events(target: str) -> None:
    assert "NPD302" not in {code for _, code in _codes(APART, target)}


def test_ge_orders_streams_by_data_so_every_pair_may_meet() -> None:
    """No join bounds a call on GE: the compressor may start while the KV branch runs."""
    compress = next(n for n, line in enumerate(APART.read_text().splitlines(), 1) if "@core_limit(16, 32)" in line)
    assert (compress, "NPD302") in _codes(APART, "ge")


def test_a_file_checked_alone_still_reports_a_pair_another_file_may_fork() -> None:
    """Alone, the compressor has no visible call site (NPD502 too); in the run, another file calls it."""
    alone = CASES / "npd302_other_file_bad" / "layers.py"
    assert [e for e in actual(alone) if e.code == "NPD302"] == expected(alone)
    assert [e.code for e in actual(alone) if e.code != "NPD302"] == ["NPD502"]
