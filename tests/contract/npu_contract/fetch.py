"""Download (once) and read the torch-npu wheel that bundles torchair.

The wheel is cached in `$NPUDSL_CACHE` or `~/.cache/npudsl/`; its Python
members are read straight from the zip archive, nothing is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

__all__ = [
    "TORCH_NPU_VERSION",
    "WheelFetchError",
    "WheelSource",
    "cache_dir",
    "fetch_wheel",
    "open_wheel",
]

TORCH_NPU_VERSION = "2.13.0"
# The Python sources are the same in every wheel of a release; pin one so that the
# download does not depend on the interpreter or machine that runs the tests.
_WHEEL_TAGS = ("--python-version", "3.11", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64")


class WheelFetchError(RuntimeError):
    """The torch-npu wheel is neither cached nor downloadable."""


def cache_dir() -> Path:
    """`$NPUDSL_CACHE`, else `~/.cache/npudsl`."""
    env = os.environ.get("NPUDSL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "npudsl"


def _cached(directory: Path, version: str) -> Path | None:
    found = sorted(directory.glob(f"torch_npu-{version}-*.whl"))
    return found[0] if found else None


def fetch_wheel(version: str = TORCH_NPU_VERSION, directory: Path | None = None) -> Path:
    """The path of the cached wheel, downloading it with pip when absent."""
    directory = directory or cache_dir()
    hit = _cached(directory, version)
    if hit is not None:
        return hit
    directory.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        *_WHEEL_TAGS,
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(directory),
        f"torch-npu=={version}",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    hit = _cached(directory, version)
    if done.returncode != 0 or hit is None:
        detail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise WheelFetchError(
            f"could not download torch-npu=={version} into {directory} "
            f"(pip exit {done.returncode}): {' / '.join(detail) or 'no wheel found'}; "
            "put the wheel there by hand or set NPUDSL_CACHE to a folder that has it"
        )
    return hit


class WheelSource:
    """Text of the `.py` members of a wheel, read on demand and remembered."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip = zipfile.ZipFile(path)
        self._names = frozenset(self._zip.namelist())
        self._texts: dict[str, str] = {}

    def has(self, member: str) -> bool:
        return member in self._names

    def read(self, member: str) -> str:
        if member not in self._texts:
            self._texts[member] = self._zip.read(member).decode("utf-8")
        return self._texts[member]

    def close(self) -> None:
        self._zip.close()


def open_wheel(version: str = TORCH_NPU_VERSION, directory: Path | None = None) -> WheelSource:
    """Fetch (or reuse) the wheel and open it for reading."""
    return WheelSource(fetch_wheel(version, directory))
