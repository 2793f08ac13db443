"""``-o OUT`` copies unchanged files without waiting for the disk; workers send back no text they did not change."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

import codegen.driver.run
from cli_util import REPO
from codegen.driver.run import read_sources, run_index
from npudsl.cli import main

SEED = (REPO / "examples" / "seed000.py").read_text(encoding="utf-8")
_PLAIN = "import torch\n\n\ndef f(x):\n    return torch.relu(x)\n"


def _tree(root: Path) -> Path:
    (root / "src" / "sub").mkdir(parents=True)
    (root / "src" / "model.py").write_text(SEED, encoding="utf-8")
    for i in range(3):
        (root / "src" / "sub" / f"plain{i}.py").write_text(_PLAIN + f"# {i}\n", encoding="utf-8")
    return root / "src"


def test_only_changed_files_are_flushed_to_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, synced = _tree(tmp_path), []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}")) or real(fd))
    assert main(["transform", str(src), "-o", str(tmp_path / "out"), "--jobs", "1"]) == 0
    assert len(synced) == 1 and Path(synced[0]).parent == tmp_path / "out"  # the temporary file of model.py
    assert "import torchair" in (tmp_path / "out" / "model.py").read_text(encoding="utf-8")
    for i in range(3):
        assert (tmp_path / "out" / "sub" / f"plain{i}.py").read_text(encoding="utf-8") == _PLAIN + f"# {i}\n"
    assert not [p for p in (tmp_path / "out").rglob("*") if p.name.startswith(".npudsl-")]


def test_in_place_still_flushes_every_file_it_rewrites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, synced = _tree(tmp_path), []
    monkeypatch.setattr(os, "fsync", synced.append)
    assert main(["transform", str(src), "--in-place", "--jobs", "1"]) == 0
    assert len(synced) == 1 and "import torchair" in (src / "model.py").read_text(encoding="utf-8")


def test_an_analyzed_but_unchanged_file_comes_back_without_its_text(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(SEED, encoding="utf-8")
    caller = "def use(block, x):  # names a stream method, changes nothing\n    return block.forward(x)\n"
    caller += "#\n" * 20_000
    (tmp_path / "use.py").write_text(caller, encoding="utf-8")
    files = read_sources((str(tmp_path / name), str(tmp_path)) for name in ("model.py", "use.py"))
    outcome = codegen.driver.run._transform_one(files[1], target="aclgraph", index=run_index(files))
    assert outcome.code is None and len(pickle.dumps(outcome)) < 500
    changed = codegen.driver.run._transform_one(files[0], target="aclgraph", index=run_index(files))
    assert len(pickle.dumps(changed)) > 1000
