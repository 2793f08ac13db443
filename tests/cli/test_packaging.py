"""The wheel: typed, licensed, torch as a supported range, no test tooling inside."""

from __future__ import annotations

import email
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

import npudsl
from cli_util import REPO

_LEFT_OUT = shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "out", "__pycache__", "tests", "bench")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    pytest.importorskip("setuptools")
    source = tmp_path_factory.mktemp("src") / "npudsl"
    shutil.copytree(REPO, source, ignore=_LEFT_OUT)
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q", "-w", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    return zipfile.ZipFile(next(out.glob("npudsl-*.whl")))


def test_the_wheel_ships_the_package_and_no_test_tooling(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert "npudsl/py.typed" in names and "npudsl/cli/__init__.py" in names and "codegen/driver/run.py" in names
    assert not [n for n in names if "contract" in n.split("/")[0:2] or n.startswith(("tests/", "bench/"))]


def test_metadata(wheel: zipfile.ZipFile) -> None:
    meta = email.message_from_bytes(wheel.read(f"npudsl-{npudsl.__version__}.dist-info/METADATA"))
    assert meta["Version"] == npudsl.__version__ and meta["License-Expression"] == "Apache-2.0"
    assert "Typing :: Typed" in meta.get_all("Classifier")
    torch = [r.split(";")[0] for r in meta.get_all("Requires-Dist") if r.startswith("torch")]
    assert torch == ["torch<2.14,>=2.13"]  # a supported range; constraints.txt pins the set-up
    links = re.findall(r"\]\(([^)]*)\)", meta.get_payload())
    assert all(link.startswith("https://") for link in links)  # relative links break on a package page
