"""aclgraph: a generated module runs again in one process (reload, another name, a second file of the same
name) without torchair's ``ValueError`` for a tag in use: a class's event is tagged after the module as
imported, so a reload finds its event made and two modules never share one; nothing is kept on torchair."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from codegen.driver.api import transform_source
from codegen.driver.run import discover, read_sources, run
from npudsl.testing import standins
from npudsl.testing.targets import trace_graph

SOURCE = """\
from torch import nn

from npudsl import after, on_stream, records


class P(nn.Module):
    @records("ready")
    def produce(self, x):
        return x + 1

    @on_stream("c", sync="manual")
    @after("ready")
    def consume(self, y):
        return y * 2

    def forward(self, x):
        return self.consume(self.produce(x))
"""


def _write(path: Path, code: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code, encoding="utf-8")
    return path


def _generated(path: Path) -> Path:
    """``path`` holding SOURCE, transformed alone for aclgraph."""
    return _write(path, transform_source(SOURCE, path=str(_write(path, SOURCE)), target="aclgraph"))


def _import_as(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def torchair() -> Iterator[types.ModuleType]:
    """A fresh stand-in torchair (a new process, as far as tags go); modules imported here are forgotten."""
    before = set(sys.modules)
    with standins.torchair_installed() as module:
        yield module
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_reload_finds_the_event_made_and_another_name_gets_its_own(
    torchair: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "pkg" / "__init__.py", "")
    path = _generated(tmp_path / "pkg" / "model.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(vars(torchair.ops))
    first = importlib.import_module("pkg.model")
    assert first._READY == "pkg.model.P.ready"
    assert importlib.reload(first)._READY == "pkg.model.P.ready"  # made already: torchair's ValueError is expected
    assert _import_as("renamed_model", path)._READY == "renamed_model.P.ready"
    assert set(vars(torchair.ops)) == before  # no table left on torchair
    for tag in ("pkg.model.P.ready", "renamed_model.P.ready"):
        with pytest.raises(ValueError, match=f"{tag} is already in use"):
            torchair.ops.npu_create_tagged_event(tag)  # each was made, once


def test_two_files_of_one_name_get_their_own_events(torchair: types.ModuleType, tmp_path: Path) -> None:
    a, b = _generated(tmp_path / "a" / "model.py"), _generated(tmp_path / "b" / "model.py")
    assert (_import_as("model", a)._READY, _import_as("model_b", b)._READY) == ("model.P.ready", "model_b.P.ready")


def test_two_files_of_one_name_in_one_run_get_their_own_events(tmp_path: Path) -> None:
    paths = [_write(tmp_path / folder / "model.py", SOURCE) for folder in ("a", "b")]
    results = run(read_sources(discover([str(p) for p in paths])), target="aclgraph", jobs=1)
    lines = [line for r in results for line in r.code.splitlines() if "_READY = " in line]
    assert lines == ['_READY = _tagged_event(f"{__name__}.P.ready")'] * 2


def test_events_named_by_tag_trace_into_tagged_ops(tmp_path: Path) -> None:
    code = _generated(tmp_path / "traced.py").read_text(encoding="utf-8")
    x = torch.arange(3.0)
    trace = trace_graph(code, "aclgraph", lambda m: m.P(), (x,), calls=2)
    tags = [n.args[0] for n in trace.aot[0].graph.nodes if "tagged_event" in str(n.target)]
    assert len(tags) == 2 and tags[0] == tags[1] and tags[0].endswith(".P.ready") and len(trace.dynamo) == 1
    assert torch.equal(trace.outputs, (x + 1) * 2)
