"""Which files of a run are analyzed: decorated files, their callers, spellers of a stream method; no others."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.driver import pyast
from codegen.driver.run import SourceFile, map_files, read_sources, run, run_index
from codegen.driver.workers import WORK_PER_WORKER, auto_jobs
from frontend_util import CALLER, LAYERS, source_files
from npudsl.cli.noqa import Rules

_SPELLER = "def use(block, x):\n    return block.branch(x)\n"  # names a stream method: the checks may report on it
_PLAIN = "import torch\n\n\ndef f(x):  # noqa: E501 names npu but never the package\n    return torch.relu(x)\n"


def _analyzed(files: list[SourceFile]) -> list[str]:
    index = run_index(files)
    seen = map_files(lambda file, index: file.path, files, index=index, jobs=1, phase="test")
    return [Path(path).name for path in seen if path is not None]


def test_decorated_files_their_callers_and_method_spellers_are_analyzed(tmp_path: Path) -> None:
    files = source_files(tmp_path, {"layers.py": LAYERS, "model.py": CALLER, "use.py": _SPELLER, "plain.py": _PLAIN})
    assert _analyzed(files) == ["layers.py", "model.py", "use.py"]


def test_a_run_without_npudsl_has_no_index_and_analyzes_nothing(tmp_path: Path) -> None:
    files = source_files(tmp_path, {"plain.py": _PLAIN, "use.py": _SPELLER, "model.py": CALLER})
    assert run_index(files) is None
    assert _analyzed(files) == []


def test_a_file_left_alone_keeps_its_text_and_its_read_error(tmp_path: Path) -> None:
    files = source_files(tmp_path, {"layers.py": LAYERS, "plain.py": _PLAIN})
    (tmp_path / "latin1.py").write_bytes(b"x = '\xe9'\n")
    files += read_sources([(str(tmp_path / "latin1.py"), str(tmp_path))])
    decorated, plain, unread = run(files, target="aclgraph", jobs=1)
    assert decorated.changed and not plain.changed and plain.code == _PLAIN.lstrip("\n") and not plain.diagnostics
    assert unread.code is None and [(d.code, d.line, d.col) for d in unread.diagnostics] == [("NPD002", 1, 6)]


def test_each_source_is_scanned_for_npudsl_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[str] = []
    real = pyast._names_npudsl
    monkeypatch.setattr(pyast, "_names_npudsl", lambda source: scanned.append(source) or real(source))
    files = source_files(tmp_path, {"layers.py": LAYERS, "model.py": CALLER, "use.py": _SPELLER, "plain.py": _PLAIN})
    results = run(files, target="aclgraph", jobs=1)
    assert [r.changed for r in results] == [True, False, False, False]
    assert sorted(scanned) == sorted(f.source for f in files)  # the index, the triage and each analysis asked
    assert pyast.mentions_npudsl(LAYERS) and pyast.mentions_npudsl(LAYERS)  # outside a run: scanned each time
    assert len(scanned) == len(files) + 2


@pytest.mark.parametrize(
    "source",
    ["npudsl", "import npudsl\n", "xnpudsl", "npudslx", "_npudsl", "npudsl_", "énpudsl", "npudsl2", "a.npudsl("],
)
def test_npudsl_is_named_as_a_word(source: str) -> None:
    assert pyast.mentions_npudsl(source) is (re.search(r"\bnpudsl\b", source) is not None)


def test_parallel_results_equal_one_process_results(tmp_path: Path) -> None:
    names = {f"m{i}.py": LAYERS if i % 2 else _PLAIN for i in range(8)}
    files = source_files(tmp_path, names)
    alone, pooled = run(files, target="aclgraph", jobs=1), run(files, target="aclgraph", jobs=2)
    assert [(r.code, r.diagnostics) for r in alone] == [(r.code, r.diagnostics) for r in pooled]
    assert sum(r.changed for r in pooled) == 4


def test_workers_follow_the_work_not_the_machine() -> None:
    assert auto_jobs(0) == 1 and auto_jobs(WORK_PER_WORKER - 1) == 1
    assert auto_jobs(2 * WORK_PER_WORKER) == min(2, _cpus())
    assert auto_jobs(10**12) == _cpus()


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


_ERROR = Diagnostic(path="m.py", line=1, col=1, code="NPD101", message="bad")
_WARN = Diagnostic(path="m.py", line=1, col=1, code="NPD505", message="unused", severity=Severity.WARNING)


@pytest.mark.parametrize("diagnostics", [(), (_ERROR,)])
def test_noqa_never_tokenizes_a_file_without_a_warning(
    monkeypatch: pytest.MonkeyPatch, diagnostics: tuple[Diagnostic, ...]
) -> None:
    monkeypatch.setattr(tokenize, "generate_tokens", pytest.fail)
    assert Rules().keep(diagnostics, "x = 1  # noqa\n") == (diagnostics, 0)


def test_noqa_still_reads_comments_when_a_warning_is_there() -> None:
    assert Rules().keep((_WARN,), "x = 1  # noqa: NPD505\n") == ((), 1)
    assert Rules().keep((_WARN,), "x = '# noqa: NPD505'\n") == ((_WARN,), 0)
    assert list(tokenize.generate_tokens(io.StringIO("x = 1\n").readline))  # the patch above did not leak
