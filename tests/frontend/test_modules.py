"""Module identity in a run: imports bind by the module they name, and same-named files stay apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.check.rules.pipeline import check_file
from codegen.driver.modules import ModuleId, absolute_import, unique_keys
from codegen.driver.run import discover, index_run, read_sources, run
from frontend_util import cli, write_tree
from npudsl.devices import DEFAULT_DEVICE

_LAYERS = """
import torch
from torch import nn

from npudsl import on_stream


@on_stream("shared")
class SharedExpert(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""

_CALLER = """
from torch import nn

{import_line}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = {cls}()

    def forward(self, x):
        y = self.shared(x)
        z = x * 2
        return y + z
"""


def _run(root: Path) -> dict[str, str]:
    """{path relative to root: output} for every file of one run over ``root``; no file may fail."""
    results = run(read_sources(discover([str(root)])), target="aclgraph", jobs=1)
    assert not [r.file.path for r in results if r.has_errors]
    return {str(Path(r.file.path).relative_to(root)): r.code or r.file.source or "" for r in results}


def _caller(import_line: str, cls: str = "SharedExpert") -> str:
    return _CALLER.format(import_line=import_line, cls=cls)


def test_an_unrelated_class_of_the_same_name_is_not_bound(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/layers.py": _LAYERS,
            "pkg/model.py": _caller("from othervendor.layers import SharedExpert"),
        },
    )
    out = _run(tmp_path)
    assert out["pkg/model.py"] == (tmp_path / "pkg/model.py").read_text()
    assert "npu_stream_switch" not in out["pkg/layers.py"]  # no visible call: it runs on its caller's stream


@pytest.mark.parametrize(
    "import_line,cls,source",
    [
        ("from .layers import SharedExpert", "SharedExpert", ".layers"),
        ("from .layers import SharedExpert as Expert", "Expert", ".layers"),
        ("from pkg.layers import SharedExpert", "SharedExpert", "pkg.layers"),
        ("try:\n    from .layers import SharedExpert\nexcept ImportError:\n    raise", "SharedExpert", ".layers"),
    ],
)
def test_imports_bind_the_class_of_the_module_they_name(
    tmp_path: Path, import_line: str, cls: str, source: str
) -> None:
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/layers.py": _LAYERS, "pkg/model.py": _caller(import_line, cls)})
    out = _run(tmp_path)
    assert 'torchair.scope.npu_stream_switch("shared", 0)' in out["pkg/model.py"]
    assert "torch.ops.air.tagged_event_wait(_SHARED_EXPERT_JOIN)" in out["pkg/model.py"]


def test_a_relative_import_from_a_package_init(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/__init__.py": _caller("from .layers import SharedExpert"), "pkg/layers.py": _LAYERS})
    assert "torch.ops.air.tagged_event_wait(_SHARED_EXPERT_JOIN)" in _run(tmp_path)["pkg/__init__.py"]


def test_a_relative_import_of_another_level_is_not_bound(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/layers.py": _LAYERS,
            "pkg/sub/__init__.py": "",
            "pkg/sub/model.py": _caller("from .layers import SharedExpert"),
        },
    )
    assert "npu_stream_switch" not in _run(tmp_path)["pkg/sub/model.py"]


_BLOCK = """
from torch import nn

from npudsl import on_stream


class Block(nn.Module):
    @on_stream("side")
    def f(self, x):
        return x * 2

    def forward(self, x):
        {body}
"""


def test_two_files_with_one_module_name_stay_apart(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "a/model.py": _BLOCK.format(body="y = self.f(x)\n        z = x + 1\n        return y + z"),
            "b/model.py": _BLOCK.format(body="return x"),
        },
    )
    files = read_sources(discover([str(tmp_path)]))
    assert [f.module for f in files] == ["a/model", "b/model"]
    index = index_run(files)
    found = {
        Path(f.path).parent.name: [
            d.code for d in check_file(f, index, target="portable", device=DEFAULT_DEVICE).diagnostics
        ]
        for f in files
    }
    assert found == {"a": [], "b": ["NPD502"]}
    out = _run(tmp_path)
    assert '_tagged_event(f"{__name__}.Block.f.join")' in out["a/model.py"]  # unique as imported
    assert "_tagged_event" not in out["b/model.py"]  # no call: nothing to synchronize


def test_the_cli_gives_same_named_files_tags_of_their_own_module(tmp_path: Path) -> None:
    model = _BLOCK.format(body="y = self.f(x)\n        z = x + 1\n        return y + z")
    write_tree(tmp_path / "src", {"a/model.py": model, "b/model.py": model})
    done = cli("transform", str(tmp_path / "src"), "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    for name in ("a", "b"):
        written = (tmp_path / "out" / name / "model.py").read_text()
        assert '_tagged_event(f"{__name__}.Block.f.fork")' in written  # tagged after the module as imported


def test_a_unique_module_name_is_its_own_key(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/model.py": "",
            "x/pkg/model.py": "",
            "y/model.py": "",
            "z/model.py": "",
            "w/q/util.py": "",
            "v/q/util.py": "",
        },
    )
    keys = unique_keys(
        str(tmp_path / name)
        for name in [
            "pkg/model.py",
            "pkg/__init__.py",
            "y/model.py",
            "z/model.py",
            "w/q/util.py",
            "v/q/util.py",
            "y/model.py",
        ]
    )
    assert {Path(k).relative_to(tmp_path).as_posix(): v for k, v in keys.items()} == {
        "pkg/model.py": "pkg.model",
        "pkg/__init__.py": "pkg",
        "y/model.py": "y/model",
        "z/model.py": "z/model",
        "w/q/util.py": "w/q/util",
        "v/q/util.py": "v/q/util",
    }


@pytest.mark.parametrize(
    "spec,importer,expected",
    [
        ("pkg.layers", ModuleId(key="m", dotted="m"), "pkg.layers"),
        (".layers", ModuleId(key="pkg.model", dotted="pkg.model"), "pkg.layers"),
        (".layers", ModuleId(key="pkg", dotted="pkg", package=True), "pkg.layers"),
        ("..layers", ModuleId(key="pkg.sub.model", dotted="pkg.sub.model"), "pkg.layers"),
        (".", ModuleId(key="pkg.model", dotted="pkg.model"), "pkg"),
        ("..layers", ModuleId(key="model", dotted="model"), None),
        (".layers", ModuleId(key="a/model", dotted="model"), None),
    ],
)
def test_relative_imports_resolve_from_the_package(spec: str, importer: ModuleId, expected: str | None) -> None:
    assert absolute_import(spec, importer) == expected
