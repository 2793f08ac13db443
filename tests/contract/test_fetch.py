"""The wheel is reused from the cache, and a failed download says so clearly."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from npu_contract import WheelFetchError, cache_dir, fetch_wheel, open_wheel


def test_cache_dir_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NPUDSL_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path
    monkeypatch.delenv("NPUDSL_CACHE")
    assert cache_dir() == Path.home() / ".cache" / "npudsl"


def test_cached_wheel_is_reused_without_pip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    wheel = tmp_path / "torch_npu-9.9.9-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch_npu/__init__.py", "X = 1\n")
    monkeypatch.setattr(subprocess, "run", pytest.fail)
    assert fetch_wheel("9.9.9", tmp_path) == wheel
    source = open_wheel("9.9.9", tmp_path)
    assert source.has("torch_npu/__init__.py") and source.read("torch_npu/__init__.py") == "X = 1\n"
    source.close()


def test_failed_download_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    failed = subprocess.CompletedProcess(args=[], returncode=1, stdout="", stderr="ERROR: No matching distribution")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: failed)
    with pytest.raises(WheelFetchError, match=r"could not download torch-npu==9\.9\.9 .*No matching distribution"):
        fetch_wheel("9.9.9", tmp_path / "empty")
