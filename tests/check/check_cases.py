"""The case files of tests/check/cases: expected diagnostics written on the offending lines.

A comment ``# E: NPD201@6`` (an error) or ``# W: NPD501@16`` (a warning) says
that the diagnostic is expected on that line, at that 1-based column; a line may
carry several. ``# device: NAME`` anywhere in a file checks its case against
that device profile, ``# target: T`` for that target (default aclgraph). A case is a file, or a
folder whose files are checked together (one run).
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.check.rules.pipeline import check_file
from codegen.driver.run import discover, index_run, read_sources
from npudsl.devices import DEFAULT_DEVICE, Device, get_device

__all__ = ["CASES", "Expected", "actual", "all_cases", "expected"]

CASES = Path(__file__).resolve().parent / "cases"
_EXPECT = re.compile(r"\b([EW]): (NPD\d{3})@(\d+)")
_DEVICE = re.compile(rb"^# device: (\S+)", re.MULTILINE)
_TARGET = re.compile(rb"^# target: (\S+)", re.MULTILINE)
_SEVERITY = {"E": Severity.ERROR, "W": Severity.WARNING}


@attrs.frozen(order=True)
class Expected:
    file: str  # relative to the case
    line: int
    col: int
    code: str
    severity: str


def all_cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.suffix == ".py" or (p.is_dir() and p.name != "__pycache__"))


def _files(case: Path) -> list[Path]:
    return [case] if case.is_file() else sorted(case.rglob("*.py"))


def _relative(case: Path, path: Path) -> str:
    return path.name if case.is_file() else str(path.relative_to(case))


def expected(case: Path) -> list[Expected]:
    found = []
    for path in _files(case):
        text = path.read_bytes().decode("latin-1")  # the comments are ASCII; the code may not be UTF-8
        for number, line in enumerate(text.splitlines(), 1):
            for letter, code, col in _EXPECT.findall(line.partition("#")[2] if "#" in line else ""):
                found.append(Expected(_relative(case, path), number, int(col), code, _SEVERITY[letter].value))
    return sorted(found)


def device_of(case: Path) -> Device:
    names = {m for path in _files(case) for m in _DEVICE.findall(path.read_bytes())}
    assert len(names) <= 1, f"{case}: one device per case"
    return get_device(names.pop().decode()) if names else DEFAULT_DEVICE


def target_of(case: Path) -> str:
    names = {m.decode() for path in _files(case) for m in _TARGET.findall(path.read_bytes())}
    assert len(names) <= 1, f"{case}: one target per case"
    return names.pop() if names else "aclgraph"


def diagnostics(case: Path) -> list[Diagnostic]:
    files = read_sources(discover([str(case)]))
    index = index_run(files)
    device, target = device_of(case), target_of(case)
    reports = [check_file(f, index, target=target, device=device) for f in files]
    assert not [r.internal_error for r in reports if r.internal_error]
    return [d for r in reports for d in r.diagnostics]


def actual(case: Path) -> list[Expected]:
    return sorted(
        Expected(_relative(case, Path(d.path)), d.line, d.col, d.code, d.severity.value) for d in diagnostics(case)
    )
