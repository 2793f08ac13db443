"""Where the golden inputs are, and how a case is transformed (as one run, like the CLI)."""

from __future__ import annotations

import os
from pathlib import Path

from codegen.driver.run import FileResult, discover, read_sources, run

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent.parent
CASES = ROOT / "cases"
EXAMPLES = REPO / "examples"


def case_inputs() -> list[tuple[str, Path]]:
    """(case id, path): every file or folder under cases/, and every example."""
    cases = [(p.stem if p.is_file() else p.name, p) for p in sorted(CASES.iterdir())
             if p.suffix == ".py" or (p.is_dir() and not p.name.startswith("__"))]
    examples = [(f"examples/{p.stem}", p) for p in sorted(EXAMPLES.glob("*.py")) if p.stem != "demo"]
    return cases + examples


def transform(path: Path, target: str) -> list[FileResult]:
    return run(read_sources(discover([str(path)])), target=target, jobs=1)


def golden_path(target: str, case_id: str, result: FileResult, case_path: Path) -> Path:
    if case_path.is_dir():
        return ROOT / target / case_id / os.path.relpath(result.file.path, case_path)
    return ROOT / target / f"{case_id}.py"


def golden_errors(target: str, case_id: str) -> Path:
    """The expected diagnostics of a case that is an error for ``target``."""
    return ROOT / target / f"{case_id}.err"
