"""The facts every stage reads are computed once per run: one index, one call-site search per module.

The index of decorated files and their callers is built in one pass (the callers are asked for once
the stream functions are known) and equals the index of every file given at once; the planner reads
the call sites the index found instead of searching each module again; a caller's annotated names
come from one walk and keep their meaning.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codegen.driver.run import run
from codegen.frontend.names.resolve import resolve
from codegen.index.index import build_index
from codegen.lower.flow import annotated_locals, callsites
from frontend_util import CALLER, LAYERS, source_files

_PLAIN = "def f(x):\n    return x\n"


def test_callers_asked_once_index_as_every_file_at_once() -> None:
    asked: list[frozenset[str]] = []

    def callers(defined: frozenset[str]) -> list[tuple[str, str]]:
        asked.append(defined)
        return [("model", CALLER)]

    index = build_index([("layers", LAYERS)], callers)
    assert asked == [frozenset({"SharedExpert", "Block"})]
    assert index == build_index([("layers", LAYERS), ("model", CALLER)])
    assert [call.caller for call in index.calls["layers:SharedExpert.forward"]] == ["Model.forward"]


def test_callers_not_asked_without_a_stream_function() -> None:
    asked: list[frozenset[str]] = []
    index = build_index([("plain", _PLAIN)], lambda defined: asked.append(defined) or [])
    assert asked == [] and index.callees == {} and index.calls == {}


def test_each_module_searched_for_calls_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    searched: list[str] = []
    real = callsites._search
    monkeypatch.setattr(
        callsites, "_search", lambda module, tree, index: searched.append(module) or real(module, tree, index)
    )
    results = run(source_files(tmp_path, {"layers.py": LAYERS, "model.py": CALLER}), target="aclgraph", jobs=1)
    assert [r.changed for r in results] == [True, False] and not any(r.has_errors for r in results)
    assert sorted(searched) == ["layers", "model"]


def test_a_search_is_kept_for_its_tree_and_index_only() -> None:
    tree = ast.parse(CALLER)
    index = build_index([("layers", LAYERS), ("model", CALLER)])
    found = callsites.find_calls("model", tree, index)
    assert [site.key for site in found] == ["layers:SharedExpert.forward"]
    assert callsites.find_calls("model", tree, index) is found
    other = build_index([("layers", LAYERS), ("model", CALLER)])
    assert callsites.find_calls("model", tree, other) is not found
    assert callsites.find_calls("model", tree, other) == found
    assert callsites.find_calls("layers", tree, other) == ()  # the module's key is part of what was asked


_ANNOTATED = """
def f(a: A, b: B, c: C, d: D, e: E):
    a = g(a)
    for b in h():
        pass
    local: L = make()
    if (c := g()):
        pass
    y = (d := g())
    def inner():
        e = 1
    return a
"""


def test_annotated_names_are_those_never_bound_otherwise() -> None:
    fn = ast.parse(_ANNOTATED).body[0]
    assert isinstance(fn, ast.FunctionDef)
    found = {name: ast.unparse(annotation) for name, annotation in annotated_locals.annotations_of(fn).items()}
    assert found == {"c": "C", "local": "L"}  # a walrus in an ``if`` test binds nothing a binder does


def test_npudsl_names_resolved_once_per_tree() -> None:
    tree = ast.parse(LAYERS)
    names = resolve(tree)
    assert resolve(tree) is names and resolve(tree, walrus=False) is not names
    assert names.aliases == {"on_stream": "on_stream"}
    other = resolve(ast.parse(LAYERS))  # another tree of the same text: resolved again, alike
    assert other is not names and (other.aliases, other.spellings) == (names.aliases, names.spellings)
