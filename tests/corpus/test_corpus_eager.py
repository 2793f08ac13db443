"""The corpus, run as written: each decorated model, untransformed, on CPU, against its single-stream twin.

Numerics are compared exactly (the eager runtime runs the same ops in the same
order on CPU): the outputs, the inputs written in place (KV caches), and the
state after the run (buffers updated in place). The structural tests keep the
corpus honest: twins free of npudsl, every idiom covered, entries spanning files,
docstrings naming their upstream files and idioms.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import torch

import npudsl.runtime
from corpus.registry import ENTRIES, IDIOMS, NAMES, NEEDS, ROOT, Entry
from npudsl.errors import DecoratorError

DEEP = [e for e in ENTRIES if "deep" in e.idioms]


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = [getattr(value, f.name) for f in dataclasses.fields(value)]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    return []


def _assert_same(actual: Any, expected: Any, what: str) -> None:
    got, want = _tensors(actual), _tensors(expected)
    assert len(got) == len(want), f"{what}: {len(got)} tensors, twin has {len(want)}"
    for i, (a, b) in enumerate(zip(got, want)):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=lambda m, i=i: f"{what}, tensor {i}: {m}")


def _build(entry: Entry, multistream: bool, **kwargs: Any) -> Any:
    try:
        return entry.build(multistream=multistream, **kwargs)
    except DecoratorError as error:
        reason = entry.refusal(error)
        if reason is not None:
            pytest.xfail(reason)
        raise


def _check_against_twin(entry: Entry, model: Any, twin: Any) -> None:
    twin.load_state_dict(model.state_dict())
    for n, (inputs, twin_inputs) in enumerate(zip(entry.inputs(), entry.inputs())):
        with torch.no_grad():
            out, ref = model(*inputs), twin(*twin_inputs)
        _assert_same(out, ref, f"output for input set {n}")
        _assert_same(inputs, twin_inputs, f"inputs after input set {n}")
    assert model.state_dict().keys() == twin.state_dict().keys()
    _assert_same(model.state_dict(), twin.state_dict(), "state after the run")


@pytest.mark.parametrize("multistream", [True, False], ids=["multistream", "single-stream"])
@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_eager_model_equals_twin(entry: Entry, multistream: bool) -> None:
    _check_against_twin(entry, _build(entry, multistream), entry.build_twin())


@pytest.mark.parametrize("entry", DEEP, ids=[e.name for e in DEEP])
def test_deep_model_at_60_layers_equals_twin(entry: Entry, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _record_runtime(monkeypatch)
    _check_against_twin(entry, _build(entry, True, layers=60), entry.build_twin(layers=60))
    assert sum(kind == "stream" for kind, _ in calls) >= 40, "the side stream is entered in (almost) every layer"


def _record_runtime(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """Record every stream switch and core limit the eager runtime enters."""
    calls: list[tuple[str, object]] = []
    stream, core_limit = npudsl.runtime.stream, npudsl.runtime.core_limit

    def recording_stream(tag: str, priority: int = 0) -> Any:
        calls.append(("stream", tag))
        return stream(tag, priority)

    def recording_core_limit(aicore: int, vector: int) -> Any:
        calls.append(("cores", (aicore, vector)))
        return core_limit(aicore, vector)

    monkeypatch.setattr(npudsl.runtime, "stream", recording_stream)
    monkeypatch.setattr(npudsl.runtime, "core_limit", recording_core_limit)
    return calls


def _run(entry: Entry, model: Any) -> None:
    with torch.no_grad():
        for inputs in entry.inputs():
            model(*inputs)


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_side_streams_are_used_only_with_multistream(entry: Entry, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _record_runtime(monkeypatch)
    _run(entry, _build(entry, False))
    assert calls == []
    _run(entry, _build(entry, True))
    tags = {value for kind, value in calls if kind == "stream"}
    assert tags and "default" not in tags
    if "six_streams" in entry.idioms:
        assert len(tags) >= 6, tags
    if "core_split" in entry.idioms:
        assert {("cores", (8, 16)), ("cores", (16, 32))} <= set(calls)


def _imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]


def _local_modules(entry: Entry, node: ast.Import | ast.ImportFrom) -> list[Path]:
    """The files of the entry that a relative import reads."""
    if not isinstance(node, ast.ImportFrom) or node.level != 1:
        return []
    names = [node.module] if node.module else [alias.name for alias in node.names]
    return [entry.path / f"{name}.py" for name in names if (entry.path / f"{name}.py").is_file()]


def _absolute_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [node.module or ""] if node.level == 0 else []


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_twin_imports_nothing_from_npudsl(entry: Entry) -> None:
    seen: set[Path] = set()
    todo = [entry.twin_file]
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            for node in _imports(path):
                assert "npudsl" not in [m.split(".")[0] for m in _absolute_modules(node)], f"{path.name}:{node.lineno}"
                todo.extend(_local_modules(entry, node))
    assert not seen & set(entry.decorated_files), "the twin reads a decorated module"


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_entries_import_only_inside_their_package(entry: Entry) -> None:
    for path in entry.sources:
        for node in _imports(path):
            assert getattr(node, "level", 0) <= 1, f"{path.name}:{node.lineno}"
            assert "corpus" not in [m.split(".")[0] for m in _absolute_modules(node)], f"{path.name}:{node.lineno}"


def test_every_idiom_is_covered_by_an_entry_that_builds_today() -> None:
    claimed = {idiom for e in ENTRIES for idiom in e.idioms}
    assert claimed == set(IDIOMS)
    assert {idiom for e in ENTRIES if not e.needs for idiom in e.idioms} == set(IDIOMS)
    assert all(set(e.needs) <= set(NEEDS) for e in ENTRIES)


def test_no_entry_is_excused_any_more() -> None:
    """Shared events and GE fork edges landed: every entry runs on every target, and a race is never excused."""
    race = RuntimeError("tensor 'cos, sin' made on stream 'default' at a.py:1 is read on stream 's' at b.py:2")
    for entry in ENTRIES:
        assert entry.needs == () or entry.needs == ("dotted_core_limit",), entry.name
        assert entry.refusal(race, "ge") is None and entry.refusal(race) is None


def test_registry_lists_every_entry_folder() -> None:
    folders = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())
    assert sorted(NAMES) == folders
    assert len(NAMES) >= 12


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


@pytest.mark.parametrize("entry", ENTRIES, ids=NAMES)
def test_model_docstrings_name_upstream_files_and_idioms(entry: Entry) -> None:
    docs = {path.name: _docstring(path) for path in entry.model_files}
    assert entry.decorated_files
    for path in entry.decorated_files:
        assert "Shaped after" in docs[path.name] and "Idioms:" in docs[path.name], path.name
    text = " ".join(" ".join(doc.split()) for doc in docs.values())
    assert [idiom for idiom in entry.idioms if idiom not in text] == []
    upstream_paths = [line.split()[1] for line in entry.upstream]
    assert [path for path in upstream_paths if path not in text] == []


def _stream_callables(path: Path) -> set[str]:
    """Names of the classes and functions in ``path`` with an ``@on_stream(...)`` decorator."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            calls = [d.func for d in node.decorator_list if isinstance(d, ast.Call)]
            if any(getattr(f, "id", getattr(f, "attr", None)) == "on_stream" for f in calls):
                found.add(node.name)
    return found


def _referenced(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.name)
    return names


def _called_across_files(entry: Entry) -> set[str]:
    """Stream callables defined in one model file and named in another model file of the entry."""
    files = entry.model_files
    return {name for a in files for b in files if a != b for name in _stream_callables(a) & _referenced(b)}


def test_entries_span_files() -> None:
    classes = {e.name for e in ENTRIES
               if any(n[0].isupper() for n in _called_across_files(e))}
    callables = {e.name for e in ENTRIES if _called_across_files(e)}
    assert {"cann_longcat_split", "cann_v32_deep", "sglang_many_callers"} <= classes
    assert len(callables) >= 6, callables


def test_readme_table_lists_every_entry_with_its_idioms() -> None:
    rows = [line.split("|") for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `")]
    table = {cells[1].strip().strip("`"): cells[3] for cells in rows}
    assert sorted(table) == sorted(NAMES)
    for e in ENTRIES:
        assert [idiom for idiom in IDIOMS if idiom in table[e.name]] == [i for i in IDIOMS if i in e.idioms], e.name
